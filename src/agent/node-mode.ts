/**
 * Node mode (`run --kubeconfig FILE`): the agent joins the cluster whose API server the kubeconfig
 * names, as a kubelet does. The cluster's API server is then a source of desired pods and the place
 * their status goes; the SQLite database stays the agent's checkpoint. Each part runs beside the
 * loop and never makes it wait: what it writes to the API server is queued and retried.
 */
import type { Clock } from "../clock.ts";
import { ClusterClient } from "../node/cluster-client.ts";
import type { ClusterCredentials } from "../node/kubeconfig.ts";
import type { PodObjectCache } from "../node/pod-object-cache.ts";

export interface NodeModeOptions {
  credentials: ClusterCredentials;
  /** The client to share (the kubelet port's reviews use it too); default one of `credentials`. */
  client?: ClusterClient;
  /** The Node's name (`--node`, else the client certificate's `system:node:NAME`). */
  nodeName: string;
  clock: Clock;
  log: (message: string) => void;
  /** The cache of what the node's pods reference (the loop reads it): started and stopped with node mode. */
  podObjects?: PodObjectCache;
}

export interface NodeMode {
  readonly client: ClusterClient;
  /** Stops every part; the Node and its pods stay in the cluster, as when a kubelet stops. */
  stop(): Promise<void>;
}

/** Starts the node-mode parts; none of them waits for the API server to answer. */
export function startNodeMode(options: NodeModeOptions): NodeMode {
  const client = options.client ?? new ClusterClient(options.credentials);
  const parts: { stop(): Promise<void> | void }[] = [];
  options.log(`node mode: node ${options.nodeName} of the cluster at ${client.server} (${options.credentials.file})`);
  if (options.podObjects) {
    options.podObjects.start();
    parts.push(options.podObjects);
  }
  return {
    client,
    async stop() {
      for (const part of parts.reverse()) await part.stop();
    },
  };
}
