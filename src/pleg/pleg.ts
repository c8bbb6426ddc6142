/**
 * The pod lifecycle event generator, as the kubelet's pleg.go has it: one seam between the runtime
 * and the loop. It hears the runtime's event streams, relists the runtime as a backstop for what a
 * stream missed, routes each container's start and death to the pod that runs it, and says whether
 * it is healthy: a relist that has not succeeded for longer than the threshold means the agent no
 * longer knows what its containers do, and the node is not Ready.
 */
import type { PodKey } from "../manifest/types.ts";

/** What the loop hears: a container of one of its pods started or died, or the runtime came or went. */
export type PodLifecycleEvent =
  | { type: "ContainerStarted" | "ContainerDied"; podKey: PodKey; containerId: string; /** The pod's sandbox, not one of its containers. */ sandbox: boolean }
  | { type: "RuntimeHealth"; healthy: boolean; message: string };

export interface PlegHealth {
  healthy: boolean;
  /** Why not, in the kubelet's words: `pleg was last seen active 3m0s ago; threshold is 3m0s`. */
  message?: string;
  /** When the figure last changed (for the Node condition's lastTransitionTime). */
  since: number;
}

/** Which runtime ids the loop owns: a sandbox or a container of a pod. */
export type TrackedKind = "sandbox" | "container";

export interface PodLifecycleEventGenerator {
  /** Starts the relist backstop (the streams are heard from the first watcher on). Idempotent. */
  start(): void;
  /** Stops relisting and hearing the runtime. Idempotent. */
  stop(): void;
  watch(listener: (event: PodLifecycleEvent) => void): () => void;
  /**
   * Routes `id`'s events to `podKey` from now on. True when the runtime reported its exit before
   * (a container that exits while its start call returns): the caller decides whether to sync now.
   */
  track(id: string, podKey: PodKey, kind: TrackedKind): boolean;
  untrack(id: string): void;
  /** One relist: what the streams missed since the last one is told to the watchers. */
  relist(): Promise<void>;
  healthy(): PlegHealth;
}

/** The kubelet's genericPlegRelistThreshold: three minutes without a relist and the node is not Ready. */
export const RELIST_THRESHOLD_MS = 3 * 60_000;
