/**
 * What goes to the store, and what waits for it: each pod's events since its last successful save,
 * and removals the store refused. A write that fails (disk full, read-only file system) loses
 * nothing: its events go with the pod's next save, a refused removal is recorded before the next
 * save of any pod.
 */
import type { PodKey } from "../manifest/types.ts";
import type { V1Pod } from "../v1/v1.ts";
import type { BackoffEntry } from "./backoff.ts";
import type { KubeEvent } from "../v1/kube-event.ts";
import type { PodRecord } from "./pod-state.ts";

/** Where each pass's outcome goes: the SQLite store in production, nothing or a spy in tests. */
export interface PodStateSink {
  /**
   * Persists one pod's record and the served Pod the pass drew from it (`object`, saved as given),
   * with the events and back-off entries of the pass, atomically: when it throws, nothing was
   * written (the caller hands the events again).
   */
  savePod(pod: PodRecord, object: V1Pod, events: KubeEvent[], backoff: BackoffEntry[]): void;
  /** Records that a pod is gone, with its last served Pod and the events of its last pass; atomic like savePod. */
  deletePod(pod: PodRecord, object: V1Pod, events: KubeEvent[]): void;
}

/** Events kept per pod while the store cannot write them; beyond this the oldest go (the store keeps no more either). */
const MAX_UNSAVED_EVENTS = 1000;

export interface PodCheckpointsOptions {
  store?: PodStateSink;
  /** Reports a removal the store refused, once per pod; the returned event is saved with the removal. */
  removalFailed: (pod: PodRecord, error: unknown) => KubeEvent;
}

export class PodCheckpoints {
  private readonly events = new Map<PodKey, KubeEvent[]>();
  /** By uid: a replacement under the same key may be saved before its predecessor's removal is. */
  private readonly removals = new Map<string, { pod: PodRecord; object: V1Pod; events: KubeEvent[]; reported: boolean }>();

  constructor(private readonly options: PodCheckpointsOptions) {}

  /** Queues an event for its pod's next save. */
  addEvent(event: KubeEvent): void {
    const queued = this.events.get(event.podKey) ?? [];
    queued.push(event);
    if (queued.length > MAX_UNSAVED_EVENTS) queued.splice(0, queued.length - MAX_UNSAVED_EVENTS);
    this.events.set(event.podKey, queued);
  }

  /** Saves a live pod with its queued events; throws what the store throws, keeping the events. */
  save(pod: PodRecord, object: V1Pod, backoff: BackoffEntry[]): void {
    // An older incarnation's removal goes first, so the store never holds two live pods for one key.
    this.saveRemovals();
    this.options.store?.savePod(pod, object, this.events.get(pod.spec.key) ?? [], backoff);
    this.events.delete(pod.spec.key);
  }

  /**
   * Records a pod's removal with its queued events. Never throws: the pod is gone whether or not
   * the store can say so yet, and a refused write is retried before the next save.
   */
  remove(pod: PodRecord, object: V1Pod): void {
    this.removals.set(pod.spec.uid, { pod, object, events: this.events.get(pod.spec.key) ?? [], reported: false });
    this.events.delete(pod.spec.key);
    this.saveRemovals();
  }

  /** Whether some removal the store refused is still unrecorded. */
  removalsPending(): boolean {
    return this.removals.size > 0;
  }

  /** Retries the removals the store refused. */
  retryRemovals(): void {
    this.saveRemovals();
  }

  private saveRemovals(): void {
    for (const [uid, removal] of this.removals) {
      try {
        this.options.store?.deletePod(removal.pod, removal.object, removal.events);
        this.removals.delete(uid);
      } catch (error) {
        if (removal.reported) continue;
        removal.reported = true;
        removal.events.push(this.options.removalFailed(removal.pod, error));
      }
    }
  }
}
