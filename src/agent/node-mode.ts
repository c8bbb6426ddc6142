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
import { ApiReachability } from "../node/api-reachability.ts";
import { ClusterEvents } from "../node/cluster-events.ts";
import { startNodeLifecycle, type NodeEvent, type NodeFactsSource } from "../node/node-lifecycle.ts";
import type { ClusterNode } from "../node/node-status.ts";
import type { PodSources } from "../config/pod-sources.ts";
import { startNodePods, type NodePodsOptions } from "./node-pods.ts";

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
  /** What the agent knows of its node: the Node's registration, status and lease are drawn from it. */
  node: NodeFactsSource;
  /** The node's pods: the loop they feed, the sources they join, the runtime's rules. */
  pods?: Pick<NodePodsOptions, "kubelet" | "rules" | "rescan" | "loopOpen"> & { sources: Pick<PodSources, "addCluster"> };
}

export interface NodeMode {
  readonly client: ClusterClient;
  /** The agent's node conditions changed (DiskPressure): the Node's status is reported at once. */
  nodeConditionsChanged(): void;
  /** The Node as the API server holds it once registered (its uid owns mirror pods and the Lease); undefined if stopped first. */
  readonly registered: Promise<ClusterNode | undefined>;
  /** Stops every part; the Node and its pods stay in the cluster, as when a kubelet stops. */
  stop(): Promise<void>;
}

/** Starts the node-mode parts; none of them waits for the API server to answer. */
export function startNodeMode(options: NodeModeOptions): NodeMode {
  const client = options.client ?? new ClusterClient(options.credentials);
  const parts: { stop(): Promise<void> | void }[] = [];
  options.log(`node mode: node ${options.nodeName} of the cluster at ${client.server} (${options.credentials.file})`);
  // One voice for the node: an outage of the API server is one line, whichever part meets it first.
  const reachability = new ApiReachability({ nodeName: options.nodeName, server: client.server, clock: options.clock, log: options.log });
  // Stopped last: what the other parts record on their way out is still queued, not refused.
  const events = new ClusterEvents({ client, nodeName: options.nodeName, clock: options.clock, log: options.log, reachability });
  parts.push(events);
  const nodeEvent = ({ nodeUid, reason, message }: NodeEvent) => {
    const event = { at: options.clock.now(), type: "Normal" as const, reason, message, podKey: "", namespace: "", pod: options.nodeName, podUid: nodeUid, container: "" };
    events.record(event, { kind: "Node", namespace: "", name: options.nodeName, uid: nodeUid });
  };
  const lifecycle = startNodeLifecycle({ client, server: client.server, nodeName: options.nodeName, clock: options.clock, log: options.log, source: options.node, reachability, nodeEvent });
  parts.push(lifecycle);
  if (options.pods) {
    const { sources, ...pods } = options.pods;
    const nodePods = startNodePods({ client, nodeName: options.nodeName, clock: options.clock, log: options.log, reachability, events, ...pods });
    sources.addCluster(nodePods.source);
    parts.push(nodePods);
  }
  if (options.podObjects) {
    options.podObjects.start();
    parts.push(options.podObjects);
  }
  return {
    client,
    nodeConditionsChanged: () => lifecycle.conditionsChanged(),
    registered: lifecycle.registered,
    async stop() {
      for (const part of parts.reverse()) await part.stop();
    },
  };
}
