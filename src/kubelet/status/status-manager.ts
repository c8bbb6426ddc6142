/**
 * The loop's status manager, as the kubelet has one: each pass's record is drawn once into the
 * served Pod (pod-status.ts) and shipped with the pass's events to the store (pod-checkpoints.ts),
 * and whoever follows the pods (the status file, the final table, the sources) hears it.
 */
import type { KubeEvent } from "../../v1/kube-event.ts";
import type { PodKey } from "../../manifest/types.ts";
import type { V1Pod } from "../../v1/v1.ts";
import type { BackoffEntry } from "../backoff.ts";
import { PodCheckpoints, type PodCheckpointsOptions } from "../pod-checkpoints.ts";
import type { PodRecord } from "../pod-state.ts";
import { servedPod } from "./pod-status.ts";

/** Hears each pod after its pass with the Pod the pass drew, and once more with `removed` when it is gone. */
export type PodListener = (pod: PodRecord, object: V1Pod, removed: boolean) => void;

export interface StatusManagerOptions extends PodCheckpointsOptions {
  /** Container ids are prefixed with it (`process://`, `docker://`). */
  runtimeName: string;
}

export class StatusManager {
  private readonly checkpoints: PodCheckpoints;
  private readonly runtimeName: string;
  private readonly listeners = new Set<PodListener>();
  /** The served Pod each live pod's last pass drew. */
  private readonly served = new Map<PodKey, V1Pod>();

  constructor(options: StatusManagerOptions) {
    this.checkpoints = new PodCheckpoints(options);
    this.runtimeName = options.runtimeName;
  }

  /** Queues an event for its pod's next save. */
  addEvent(event: KubeEvent): void {
    this.checkpoints.addEvent(event);
  }

  /** Draws and saves the pod as its pass left it, with its events and back-off; throws what the store throws. */
  save(pod: PodRecord, backoff: BackoffEntry[]): void {
    const object = servedPod(pod, { runtimeName: this.runtimeName });
    this.served.set(pod.spec.key, object);
    this.checkpoints.save(pod, object, backoff);
    for (const listener of this.listeners) listener(pod, object, false);
  }

  /** Draws the pod's last status and records its removal. Never throws (pod-checkpoints.ts). */
  remove(pod: PodRecord): void {
    const object = servedPod(pod, { runtimeName: this.runtimeName });
    this.served.delete(pod.spec.key);
    this.checkpoints.remove(pod, object);
    for (const listener of this.listeners) listener(pod, object, true);
  }

  /** Whether some removal the store refused is still unrecorded (pod-checkpoints.ts). */
  removalsPending(): boolean {
    return this.checkpoints.removalsPending();
  }

  retryRemovals(): void {
    this.checkpoints.retryRemovals();
  }

  listen(listener: PodListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The live pods as their last passes drew them. */
  servedPods(): V1Pod[] {
    return [...this.served.values()];
  }
}
