/**
 * The node's events in the cluster, as the kubelet's event recorder posts them (client-go's
 * record.EventBroadcaster with its EventCorrelator): a core/v1 Event in the pod's namespace, about
 * the pod (and a container's fieldPath), or in `default` about the Node, from the component
 * `kubelet` on this host; the same event
 * again (same pod, container, type, reason and message) is one Event whose count grows, by a patch
 * of its count and lastTimestamp. Posting runs beside the loop: events are queued (bounded: past
 * the bound the oldest go, as the broadcaster drops what it cannot keep up with), sent one at a
 * time, and a request the API server did not answer is retried with a capped doubling wait.
 */
import { cappedDoubling } from "../capped-doubling.ts";
import type { Clock } from "../clock.ts";
import type { KubeEvent } from "../v1/kube-event.ts";
import { ApiReachability, requestOf } from "./api-reachability.ts";
import { type ClusterApi, ClusterApiError, PATCH_TYPE } from "./cluster-client.ts";

/** What an event is about, as the cluster knows it: a pod, or (kind Node, no namespace) the node itself. */
export interface InvolvedObject {
  kind?: "Pod" | "Node";
  namespace: string;
  name: string;
  uid: string;
}

/** Where client-go's recorder puts an event about a cluster-scoped object (metav1.NamespaceDefault). */
const CLUSTER_SCOPED_EVENTS_NAMESPACE = "default";

export interface ClusterEventsOptions {
  /** Shared with the node's other writers, so an outage is told once; default one of its own. */
  reachability?: ApiReachability;
  client: Pick<ClusterApi, "request">;
  nodeName: string;
  clock: Clock;
  log: (message: string) => void;
  /** Events queued at most; default 1000 (the broadcaster's queue). */
  maxQueued?: number;
  retry?: { baseMs: number; capMs: number };
}

/** The correlator's cache size (client-go's maxLruCacheEntries). */
const MAX_AGGREGATED = 4096;
const DEFAULT_MAX_QUEUED = 1000;
const DEFAULT_RETRY = { baseMs: 1000, capMs: 30_000 };

interface Aggregate {
  name: string;
  count: number;
  firstTimestamp: string;
  /** Whether the Event exists in the API server yet (the first POST answered). */
  posted: boolean;
}

interface Pending {
  key: string;
  event: KubeEvent;
  pod: InvolvedObject;
}

export class ClusterEvents {
  private readonly queue: Pending[] = [];
  private readonly aggregates = new Map<string, Aggregate>();
  private sending = false;
  private failures = 0;
  private cancelRetry?: () => void;
  private stopped = false;
  private dropped = 0;
  private readonly reachability: ApiReachability;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: ClusterEventsOptions) {
    this.reachability = options.reachability ?? new ApiReachability({ clock: options.clock, log: options.log });
  }

  /** Queues the event about `pod` (or the Node); never waits. */
  record(event: KubeEvent, pod: InvolvedObject): void {
    if (this.stopped) return;
    const key = [pod.uid, event.container, event.type, event.reason, event.message].join("\u0000");
    const aggregate = this.aggregates.get(key);
    if (aggregate) {
      aggregate.count++;
      // Fresh in the cache again (an LRU by insertion order).
      this.aggregates.delete(key);
      this.aggregates.set(key, aggregate);
    } else {
      this.aggregates.set(key, { name: `${pod.name}.${eventSuffix(event.at)}`, count: 1, firstTimestamp: new Date(event.at).toISOString(), posted: false });
      if (this.aggregates.size > MAX_AGGREGATED) this.aggregates.delete(this.aggregates.keys().next().value!);
    }
    // A repeat still waiting in the queue is sent once, with the newest count (the head may be in flight with an older one).
    if (aggregate && this.queue.some((pending, index) => pending.key === key && !(index === 0 && this.sending))) return;
    this.queue.push({ key, event, pod });
    if (this.queue.length > (this.options.maxQueued ?? DEFAULT_MAX_QUEUED)) {
      this.queue.shift();
      if (this.dropped++ === 0) this.options.log("events: the queue toward the API server is full; the oldest events are dropped");
    }
    this.send();
  }

  idle(): Promise<void> {
    if (!this.sending && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    this.cancelRetry?.();
  }

  private send(): void {
    if (this.sending || this.cancelRetry || this.stopped) return;
    this.sending = true;
    void this.drain().finally(() => {
      this.sending = false;
      if (!this.cancelRetry && this.queue.length === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  private async drain(): Promise<void> {
    while (!this.stopped && this.queue.length > 0) {
      const pending = this.queue[0]!;
      try {
        await this.post(pending);
        this.failures = 0;
        this.reachability.succeeded();
      } catch (error) {
        if (!(error instanceof ClusterApiError)) throw error;
        this.reachability.failed(requestOf(error), error);
        if (error.unavailable) {
          this.failures++;
          const { baseMs, capMs } = this.options.retry ?? DEFAULT_RETRY;
          this.cancelRetry = this.options.clock.setTimeout(() => {
            this.cancelRetry = undefined;
            this.send();
          }, cappedDoubling(baseMs, capMs, this.failures - 1));
          return;
        }
        // Refused (forbidden, invalid, its namespace gone): retrying would not help; the event goes.
        const aggregate = this.aggregates.get(pending.key);
        if (aggregate && !aggregate.posted) this.aggregates.delete(pending.key);
      }
      this.queue.shift();
    }
  }

  private async post({ key, event, pod }: Pending): Promise<void> {
    const aggregate = this.aggregates.get(key) ?? { name: `${pod.name}.${eventSuffix(event.at)}`, count: 1, firstTimestamp: new Date(event.at).toISOString(), posted: false };
    const lastTimestamp = new Date(this.options.clock.now()).toISOString();
    const namespace = pod.namespace || CLUSTER_SCOPED_EVENTS_NAMESPACE;
    const path = `/api/v1/namespaces/${namespace}/events`;
    if (aggregate.posted) {
      try {
        await this.options.client.request({ method: "PATCH", path: `${path}/${aggregate.name}`, body: { count: aggregate.count, lastTimestamp }, contentType: PATCH_TYPE.strategic });
        return;
      } catch (error) {
        // Expired meanwhile (events live an hour): posted again as a new one.
        if (!(error instanceof ClusterApiError) || !error.notFound) throw error;
      }
    }
    await this.options.client.request({
      method: "POST",
      path,
      body: {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: aggregate.name, namespace },
        involvedObject: {
          apiVersion: "v1",
          kind: pod.kind ?? "Pod",
          ...(pod.namespace && { namespace: pod.namespace }),
          name: pod.name,
          uid: pod.uid,
          ...(event.container && { fieldPath: `spec.containers{${event.container}}` }),
        },
        reason: event.reason,
        message: event.message,
        type: event.type,
        source: { component: "kubelet", host: this.options.nodeName },
        firstTimestamp: aggregate.firstTimestamp,
        lastTimestamp,
        count: aggregate.count,
        reportingComponent: "kubelet",
        reportingInstance: this.options.nodeName,
      },
    });
    aggregate.posted = true;
  }
}

/** client-go's event name suffix: the time in nanoseconds, in hex. */
function eventSuffix(at: number): string {
  return (BigInt(at) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))).toString(16);
}
