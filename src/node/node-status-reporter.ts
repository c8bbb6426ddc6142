/**
 * The Node's status, computed every 10 s (nodeStatusUpdateFrequency) and sent as a strategic merge
 * patch of nodes/NAME/status only when it changed or 5 minutes (nodeStatusReportFrequency) passed
 * since the last report, as the kubelet's tryUpdateNodeStatus does; at once when the agent's node
 * conditions changed. The patch goes from the Node the API server last returned to it with the new
 * status laid over (so a condition another writer changed, such as the node-lifecycle controller's
 * Unknown, is put right). Where the kubelet watches its Node, this reads it again only when the
 * controller may have written: after any failed request of the node (its Lease's too), after a
 * round came late (the agent was stalled past the controller's grace), and before the 5-minute
 * report (so another writer's edit of what the node owns, a removed label, is put right by then).
 * A failure waits for the next round: the pods never wait on it.
 */
import type { Clock } from "../clock.ts";
import type { ApiReachability } from "./api-reachability.ts";
import { PATCH_TYPE, type ClusterApi } from "./cluster-client.ts";
import { conditionEvents, nodeStatusHasChanged, nodeStatusPatch, withDrawnStatus, type ClusterNode, type DrawnStatus } from "./node-status.ts";

export const NODE_STATUS_UPDATE_FREQUENCY_MS = 10_000;
export const NODE_STATUS_REPORT_FREQUENCY_MS = 5 * 60_000;

export interface NodeStatusReporterOptions {
  client: ClusterApi;
  clock: Clock;
  nodeName: string;
  /** The Node as registration left it. */
  registered: ClusterNode;
  /** The node's status as of now (the one drawing). */
  draw: () => DrawnStatus;
  /**
   * Labels every round puts back if someone removed or changed them (`kubernetes.io/os` and
   * `kubernetes.io/arch`, as updateNode does); the other default labels are put back at registration only.
   */
  requiredLabels: Record<string, string>;
  reachability: ApiReachability;
  /** Aborts the request under way when the node stops. */
  signal?: AbortSignal;
  /** Told the reasons of the events a patched status's condition changes bring (conditionEvents), once the API server took it. */
  conditionEvents?: (reasons: string[]) => void;
}

export class NodeStatusReporter {
  private held: ClusterNode;
  /** The reachability's failure count when the held Node was last read or patched. */
  private failuresSeen: number;
  private lastSyncAt: number | undefined;
  private lastReportAt: number | undefined;
  private stopped = false;
  private cancelTimer: (() => void) | undefined;
  private running: Promise<void> | undefined;
  /** A sync was asked for while one ran: run again once it ends. */
  private again = false;

  constructor(private readonly options: NodeStatusReporterOptions) {
    this.held = options.registered;
    this.failuresSeen = options.reachability.failures;
  }

  /** The Node as the API server last returned it. */
  get node(): ClusterNode {
    return this.held;
  }

  /** Syncs now, then every NODE_STATUS_UPDATE_FREQUENCY_MS. */
  start(): void {
    this.kick();
  }

  /** The node's conditions changed (DiskPressure, the PLEG): sync now instead of at the next tick. */
  conditionsChanged(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    await this.running;
  }

  private kick(): void {
    this.cancelTimer?.();
    this.running = this.sync().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
      } else {
        this.cancelTimer = this.options.clock.setTimeout(() => this.kick(), NODE_STATUS_UPDATE_FREQUENCY_MS);
      }
    });
  }

  /** One round: read the Node again if stale, compute the status, patch when it changed or is due. */
  async sync(): Promise<void> {
    const { client, clock, nodeName, reachability } = this.options;
    const path = `/api/v1/nodes/${nodeName}`;
    const late = this.lastSyncAt !== undefined && clock.now() - this.lastSyncAt > 2 * NODE_STATUS_UPDATE_FREQUENCY_MS;
    const due = this.lastReportAt === undefined || clock.now() - this.lastReportAt >= NODE_STATUS_REPORT_FREQUENCY_MS;
    this.lastSyncAt = clock.now();
    if (late || (due && this.lastReportAt !== undefined) || reachability.failures !== this.failuresSeen) {
      const failures = reachability.failures;
      try {
        this.held = await client.request<ClusterNode>({ method: "GET", path, signal: this.options.signal });
        reachability.succeeded("GET nodes");
        this.failuresSeen = failures;
      } catch (error) {
        reachability.failed("GET nodes", error);
        return;
      }
    }
    const now = clock.now();
    const next = withDrawnStatus(this.held, this.options.draw(), now);
    let labelsPutBack = false;
    for (const [label, value] of Object.entries(this.options.requiredLabels)) {
      if (next.metadata.labels?.[label] === value) continue;
      (next.metadata.labels ??= {})[label] = value;
      labelsPutBack = true;
    }
    if (!due && !labelsPutBack && !nodeStatusHasChanged(this.held.status, next.status)) return;
    try {
      const held = this.held;
      this.held = await client.request<ClusterNode>({ method: "PATCH", path: `${path}/status`, body: nodeStatusPatch(held, next), contentType: PATCH_TYPE.strategic, signal: this.options.signal });
      reachability.succeeded("PATCH nodes/status");
      this.lastReportAt = now;
      const reasons = conditionEvents(held.status?.conditions, next.status?.conditions ?? []);
      if (reasons.length > 0) this.options.conditionEvents?.(reasons);
    } catch (error) {
      reachability.failed("PATCH nodes/status", error);
    }
  }
}
