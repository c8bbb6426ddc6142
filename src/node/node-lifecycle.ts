/**
 * The Node's lifecycle in the cluster, as one part of node mode: register the Node (retrying until
 * the API server takes it), then renew its Lease every 10 s and report its status every 10 s (on
 * change, at least every 5 minutes, at once when the agent's node conditions change). Everything
 * runs beside the loop on the agent's clock; an API server that is away costs one log line when it
 * goes and one when it comes back.
 */
import type { Clock } from "../clock.ts";
import type { DiskPressureCondition } from "../eviction/disk-pressure.ts";
import type { NodeReservations } from "../eviction/node-allocatable.ts";
import type { PlegHealth } from "../pleg/pleg.ts";
import { ApiReachability } from "./api-reachability.ts";
import type { ClusterApi } from "./cluster-client.ts";
import { NodeLease } from "./node-lease.ts";
import { containerRuntimeVersion, nodeObject, type HostFacts } from "./node-object.ts";
import { CONTROLLER_MANAGED_ATTACH, registerNode } from "./node-registration.ts";
import { NodeStatusReporter } from "./node-status-reporter.ts";
import { conditionEvents, withDrawnStatus, type ClusterNode, type DrawnStatus } from "./node-status.ts";

/** What the agent knows of its node, read at each round. */
export interface NodeFactsSource {
  /** The host's capacity and pressure (readHostFacts). */
  facts(): HostFacts;
  reservations: NodeReservations;
  maxPods?: number;
  /** `process` or `docker`. */
  runtimeName: string;
  /** The engine's version once it said it (Runtime.version); undefined before, or for the process runtime. */
  engineVersion(): string | undefined;
  pleg(): PlegHealth;
  /** DiskPressure as the agent's monitor holds it. */
  diskPressure(): DiskPressureCondition | undefined;
  /** The port of the agent's kubelet server (`--kubelet-listen`); 0 while none listens. */
  kubeletPort(): number;
  /** The node's InternalIP (`--node-ip`). */
  nodeIP: string;
}

export interface NodeLifecycleOptions {
  /** The node's one report of the API server's reachability, shared with its other parts; default its own. */
  reachability?: ApiReachability;
  client: ClusterApi;
  /** For the log lines: the API server's address. */
  server: string;
  nodeName: string;
  clock: Clock;
  log: (message: string) => void;
  source: NodeFactsSource;
  /** Where the Node's events go (the kubelet's recorder for its nodeRef): its start, and its conditions' changes. */
  nodeEvent?: (event: NodeEvent) => void;
}

/** An event about the Node, with the uid it was registered under. */
export interface NodeEvent {
  nodeUid: string;
  reason: string;
  message: string;
}

export interface NodeLifecycle {
  /** Resolves with the Node once registered (undefined if stopped before). */
  readonly registered: Promise<ClusterNode | undefined>;
  /** The agent's node conditions changed: report the status now. */
  conditionsChanged(): void;
  /** Stops registering, renewing and reporting; the Node and its Lease stay in the cluster. */
  stop(): Promise<void>;
}

export function startNodeLifecycle(options: NodeLifecycleOptions): NodeLifecycle {
  const { client, clock, nodeName, log } = options;
  const reachability = options.reachability ?? new ApiReachability({ nodeName, server: options.server, clock, log });
  const abort = new AbortController();
  const draw = () => drawStatus(options.source, nodeName, clock.now());
  let lease: NodeLease | undefined;
  let reporter: NodeStatusReporter | undefined;
  const registered = registerNode({
    client,
    clock,
    reachability,
    log,
    initialNode: () => initialNode(options.source, nodeName, clock.now()),
    signal: abort.signal,
  }).then((node) => {
    if (!node || abort.signal.aborted) return undefined;
    const nodeUid = node.metadata.uid ?? "";
    const statusEvents = (reasons: string[]) => {
      for (const reason of reasons) options.nodeEvent?.({ nodeUid, reason, message: `Node ${nodeName} status is now: ${reason}` });
    };
    // As a kubelet's start: "Starting kubelet.", then the events of the setters run on the Node it
    // registers (every pressure condition is new there), whether or not the Node existed.
    options.nodeEvent?.({ nodeUid, reason: "Starting", message: "Starting kubelet." });
    statusEvents(conditionEvents(undefined, draw().conditions));
    lease = new NodeLease({ client, clock, nodeName, nodeUid, reachability, signal: abort.signal });
    const { labels } = drawNode(options.source, nodeName, clock.now()).metadata;
    const requiredLabels = { "kubernetes.io/os": labels["kubernetes.io/os"]!, "kubernetes.io/arch": labels["kubernetes.io/arch"]! };
    reporter = new NodeStatusReporter({ client, clock, nodeName, registered: node, draw, requiredLabels, reachability, signal: abort.signal, conditionEvents: statusEvents });
    lease.start();
    reporter.start();
    return node;
  });
  return {
    registered,
    conditionsChanged: () => reporter?.conditionsChanged(),
    async stop() {
      // Quiet first (what is aborted is no news), the rounds told to end, then their requests aborted.
      reachability.close();
      const stopping = [lease?.stop(), reporter?.stop()];
      abort.abort();
      await registered;
      await Promise.all(stopping);
    },
  };
}

/** The Node node mode creates: the drawing's labels, the attach/detach annotation, its status as of `now`. */
export function initialNode(source: NodeFactsSource, nodeName: string, now: number): ClusterNode {
  const { labels } = drawNode(source, nodeName, now).metadata;
  return withDrawnStatus({ metadata: { name: nodeName, labels, annotations: { [CONTROLLER_MANAGED_ATTACH]: "true" } } }, drawStatus(source, nodeName, now), now);
}

/** The drawn status node mode reports: the one drawing, at this node's addresses and kubelet port. */
export function drawStatus(source: NodeFactsSource, nodeName: string, now: number): DrawnStatus {
  const { capacity, allocatable, conditions, addresses, daemonEndpoints, nodeInfo } = drawNode(source, nodeName, now).status as DrawnStatus;
  return { capacity, allocatable, conditions, addresses, daemonEndpoints, nodeInfo };
}

function drawNode(source: NodeFactsSource, nodeName: string, now: number) {
  const diskPressure = source.diskPressure();
  return nodeObject(source.facts(), {
    name: nodeName,
    uid: "",
    createdAt: now,
    heartbeatAt: now,
    liveness: "running",
    containerRuntimeVersion: containerRuntimeVersion(source.runtimeName, source.engineVersion()),
    reservations: source.reservations,
    ...(diskPressure && { diskPressure }),
    maxPods: source.maxPods,
    pleg: source.pleg(),
    kubeletPort: source.kubeletPort(),
    // The API server reaches the node's kubelet port at the InternalIP; Hostname is the node's name
    // (a SAN of its serving certificate), as a kubelet run with --hostname-override=NAME reports.
    addresses: [
      { type: "InternalIP", address: source.nodeIP },
      { type: "Hostname", address: nodeName },
    ],
  }) as { metadata: { labels: Record<string, string> }; status: unknown };
}
