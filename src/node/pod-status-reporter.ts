/**
 * The status manager's side toward the API server (pkg/kubelet/status/status_manager.go syncPod):
 * the loop hands each pass's status here and goes on; a pod's newest status replaces one still
 * queued (only the newest matters), each pod has at most one request in flight, and a failed one is
 * retried with a capped doubling wait. A status equal to the one last shipped is no request, and a
 * status patch carries `metadata.uid`, so it never lands on another pod of the same name. Once a
 * pod being deleted has stopped and its final status is acknowledged, the pod is deleted with grace
 * 0 and a uid precondition (canBeDeleted): without it the pod would stay Terminating forever.
 */
import { cappedDoubling } from "../capped-doubling.ts";
import type { Clock } from "../clock.ts";
import type { V1PodStatus } from "../v1/v1.ts";
import { type ClusterApi, ClusterApiError, PATCH_TYPE } from "./cluster-client.ts";
import { ApiReachability, requestOf } from "./api-reachability.ts";
import { mergePodStatus } from "./merge-pod-status.ts";
import { deepEqual, podStatusPatch } from "./pod-status-patch.ts";

/** A pod in the cluster, by the identity its writes are checked against. */
export interface ClusterPodRef {
  namespace: string;
  name: string;
  uid: string;
  /** The condition types of its spec.readinessGates: Ready waits for them (merge-pod-status.ts). */
  readinessGates?: readonly string[];
}

export interface PodStatusReporterOptions {
  /** Shared with the node's other writers, so an outage is told once; default one of its own. */
  reachability?: ApiReachability;
  client: Pick<ClusterApi, "request">;
  clock: Clock;
  log: (message: string) => void;
  /** Wait after a failed request: first wait, doubling up to the cap. Default 500 ms to 30 s. */
  retry?: { baseMs: number; capMs: number };
  /** Requests in flight at once, over all pods. Default 8. */
  maxInFlight?: number;
}

const DEFAULT_RETRY = { baseMs: 500, capMs: 30_000 };
const DEFAULT_IN_FLIGHT = 8;

interface Entry {
  pod: ClusterPodRef;
  /** The status the API server last acknowledged (or the watch last showed): the base of the next patch. */
  server?: V1PodStatus;
  /** Its resourceVersion, so an older watch event does not replace a newer answer. */
  serverVersion?: number;
  /** The node's status last shipped (before merging): an equal one is no request. */
  shipped?: V1PodStatus;
  pending?: { status: V1PodStatus; finish: boolean };
  busy: boolean;
  deleted: boolean;
  failures: number;
  cancelRetry?: () => void;
}

export class PodStatusReporter {
  private readonly entries = new Map<string, Entry>();
  private readonly ready: string[] = [];
  private inFlight = 0;
  private stopped = false;
  private readonly reachability: ApiReachability;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(private readonly options: PodStatusReporterOptions) {
    this.reachability = options.reachability ?? new ApiReachability({ clock: options.clock, log: options.log });
  }

  /**
   * What the API server holds for the pod, as the source's list or watch saw it. A newer status
   * than the node's last write that no longer says what the node reported (someone else wrote the
   * status) is corrected, as the kubelet's status manager reconciles a pod whose API status drifted.
   */
  observe(pod: ClusterPodRef, status: V1PodStatus | undefined, resourceVersion: string | undefined): void {
    const entry = this.entryOf(pod);
    const version = Number(resourceVersion ?? 0);
    if (entry.serverVersion !== undefined && version <= entry.serverVersion) return;
    entry.server = status;
    entry.serverVersion = version;
    const shipped = entry.shipped;
    if (!shipped || entry.deleted || entry.pending || entry.busy || this.stopped) return;
    if (!podStatusPatch(pod.uid, status, mergePodStatus(status, shipped, this.options.clock.now(), entry.pod.readinessGates))) return;
    entry.shipped = undefined;
    entry.pending = { status: shipped, finish: false };
    if (!entry.cancelRetry) this.enqueue(pod.uid);
  }

  /** Queues the pod's newest status; `finish` deletes the pod once that status is acknowledged. Never waits. */
  report(pod: ClusterPodRef, status: V1PodStatus, options: { finish?: boolean } = {}): void {
    if (this.stopped) return;
    const entry = this.entryOf(pod);
    if (entry.deleted) return;
    entry.pending = { status, finish: options.finish ?? false };
    if (!entry.busy && !entry.cancelRetry) this.enqueue(pod.uid);
  }

  /** Forgets a pod the cluster no longer has (its queued status with it). */
  forget(uid: string): void {
    const entry = this.entries.get(uid);
    if (!entry) return;
    entry.cancelRetry?.();
    entry.pending = undefined;
    this.entries.delete(uid);
  }

  /** Whether the pod's status (and deletion) is all shipped. */
  settled(uid: string): boolean {
    const entry = this.entries.get(uid);
    return !entry || (!entry.pending && !entry.busy && !entry.cancelRetry);
  }

  /** Resolves once nothing is queued or in flight (tests; retries armed on the clock count as queued). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const entry of this.entries.values()) entry.cancelRetry?.();
  }

  private entryOf(pod: ClusterPodRef): Entry {
    let entry = this.entries.get(pod.uid);
    if (!entry) {
      entry = { pod, busy: false, deleted: false, failures: 0 };
      this.entries.set(pod.uid, entry);
    }
    entry.pod = pod;
    return entry;
  }

  private enqueue(uid: string): void {
    if (!this.ready.includes(uid)) this.ready.push(uid);
    this.pump();
  }

  private pump(): void {
    const max = this.options.maxInFlight ?? DEFAULT_IN_FLIGHT;
    while (!this.stopped && this.inFlight < max && this.ready.length > 0) {
      const entry = this.entries.get(this.ready.shift()!);
      if (!entry || entry.busy || !entry.pending) continue;
      entry.busy = true;
      this.inFlight++;
      void this.ship(entry).finally(() => {
        entry.busy = false;
        this.inFlight--;
        if (entry.pending && !entry.cancelRetry && this.entries.get(entry.pod.uid) === entry) this.enqueue(entry.pod.uid);
        this.pump();
        if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
    }
  }

  private isIdle(): boolean {
    return this.inFlight === 0 && [...this.entries.values()].every((entry) => !entry.pending && !entry.busy && !entry.cancelRetry);
  }

  private async ship(entry: Entry): Promise<void> {
    const { status, finish } = entry.pending!;
    entry.pending = undefined;
    const { namespace, name, uid } = entry.pod;
    const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
    try {
      if (!deepEqual(status, entry.shipped)) {
        const merged = mergePodStatus(entry.server, status, this.options.clock.now(), entry.pod.readinessGates);
        const patch = podStatusPatch(uid, entry.server, merged);
        if (patch) {
          const answer = await this.options.client.request<{ metadata?: { resourceVersion?: string }; status?: V1PodStatus }>({ method: "PATCH", path: `${path}/status`, body: patch, contentType: PATCH_TYPE.strategic });
          entry.server = answer.status;
          entry.serverVersion = Number(answer.metadata?.resourceVersion ?? entry.serverVersion ?? 0);
        }
        entry.shipped = status;
      }
      if (finish) {
        await this.options.client.request({ method: "DELETE", path, body: { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions: { uid } } });
        entry.deleted = true;
      }
      entry.failures = 0;
      this.reachability.succeeded();
    } catch (error) {
      if (!(error instanceof ClusterApiError)) throw error;
      if (error.notFound || error.code === 409) {
        // Gone, or the name now holds another pod (the uid precondition failed): nothing left to report.
        if (finish) entry.deleted = true;
        else this.forget(uid);
        return;
      }
      // A newer status queued meanwhile wins; else this one is tried again.
      entry.pending ??= { status, finish };
      entry.failures++;
      this.reachability.failed(requestOf(error), error);
      const { baseMs, capMs } = this.options.retry ?? DEFAULT_RETRY;
      entry.cancelRetry = this.options.clock.setTimeout(() => {
        entry.cancelRetry = undefined;
        if (this.entries.get(uid) === entry && entry.pending) this.enqueue(uid);
      }, cappedDoubling(baseMs, capMs, entry.failures - 1));
    }
  }
}
