/**
 * Events the loop, the pod sources and the node emit, with the kubelet's reasons and wording. `run`
 * prints them as they happen; the store keeps them with kubectl-style repeat counting.
 */
import type { PodKey } from "../manifest/types.ts";

export type EventType = "Normal" | "Warning";

export interface KubeEvent {
  at: number;
  type: EventType;
  reason: string;
  podKey: PodKey;
  namespace: string;
  pod: string;
  podUid: string;
  /** Empty for pod-level events. */
  container: string;
  message: string;
}

export type EventListener = (event: KubeEvent) => void;

/** Fans events out to listeners (the `run` printer, the store's batch, tests). */
export class EventRecorder {
  private readonly listeners = new Set<EventListener>();

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: KubeEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
