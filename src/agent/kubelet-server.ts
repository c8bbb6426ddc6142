/**
 * The kubelet's own server for the agent, started like its API: a failure to listen (a busy port)
 * is one clear line and never stops the agent, whose pods matter more than its endpoints. In node
 * mode it is the port the cluster's API server calls (logs, exec, attach, port-forward, stats):
 * served with the node's certificate, to whom the cluster authenticates and authorizes.
 */
import type { ListenAddress } from "../api/http/server.ts";
import type { Clock } from "../clock.ts";
import type { ClusterApi } from "../node/cluster-client.ts";
import { KubeletAuth } from "../server/auth/kubelet-auth.ts";
import { startKubeletServer, type KubeletServing, type RunningKubeletServer, type StartKubeletServerOptions } from "../server/start.ts";
import { listenOrSayWhy } from "./api.ts";

export function startAgentKubeletServer(options: Omit<StartKubeletServerOptions, "listen"> & { listen: ListenAddress | undefined }): RunningKubeletServer | { failure: string } | undefined {
  return listenOrSayWhy(options.listen, (listen) => startKubeletServer({ ...options, listen }));
}

/** What node mode's kubelet port is served with, from the kubelet's flags (PEM already read). */
export interface NodeServingOptions {
  /** `--tls-cert-file` and `--tls-private-key-file`; absent, the agent's self-signed pair. */
  tls?: { cert: string; key: string };
  /** `--client-ca-file`, else the kubeconfig's cluster CA (the one that signs the API server's kubelet client certificate). */
  clientCa?: string;
}

/** The node-mode serving of the kubelet port: its certificate, and the webhook authentication and authorization through `client`. */
export function nodeKubeletServing(options: NodeServingOptions & { client: Pick<ClusterApi, "request">; nodeName: string; clock: Clock; log: (message: string) => void }): KubeletServing {
  const auth = new KubeletAuth({ client: options.client, nodeName: options.nodeName, clock: options.clock, log: options.log });
  return { gate: auth.gate, ...(options.tls && { tls: options.tls }), ...(options.clientCa !== undefined && { clientCa: options.clientCa }) };
}
