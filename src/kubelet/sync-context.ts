/**
 * What the per-pod steps (start, refresh, stop) need from the loop: the runtime, the clock, the
 * back-off stores, and three ways to report back (an event, a wake-up time, a re-sync request).
 */
import type { Clock } from "../clock.ts";
import type { NodeAllocatable } from "../eviction/node-allocatable.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { BackoffStore } from "./backoff.ts";
import type { EventType } from "../v1/kube-event.ts";
import type { KubeletMetricsRecorder } from "../stats/kubelet-metrics.ts";
import type { ContainerRecord, PodRecord } from "./pod-state.ts";
import type { PodObjectSource } from "./objects/pod-object-source.ts";
import type { TokenCache } from "./volumes/token-cache.ts";
import type { OomScorePolicy } from "./oom-score-adj.ts";

export interface SyncContext {
  runtime: Runtime;
  clock: Clock;
  /** Container restart back-off. */
  backoff: BackoffStore;
  /** Image pull back-off (ImagePullBackOff), kept apart so a pull failure does not lengthen restarts. */
  pullBackoff: BackoffStore;
  event(pod: PodRecord, type: EventType, reason: string, container: ContainerRecord | undefined, message: string): void;
  /** Asks for this pod to be synced again no later than `at` (epoch ms). */
  wakeAt(pod: PodRecord, at: number): void;
  /** Asks for this pod to be synced again as soon as possible (after an async step finished). */
  requestSync(pod: PodRecord): void;
  /** Remembers which pod a runtime container belongs to, so its exit event wakes that pod. */
  track(containerId: string, pod: PodRecord): void;
  untrack(containerId: string): void;
  log(message: string): void;
  /** Where container starts and their failures are counted (kubelet_started_containers_*). */
  metrics: KubeletMetricsRecorder;
  /** True once the loop was stopped: work completing late (a preStop hook) must not act any more. */
  stopped(): boolean;
  /** The node's allocatable: the downward API's value of a limit a container does not set. */
  allocatable?: NodeAllocatable;
  /** How each container's OOM score adjustment is made; absent: none is set. */
  oomScores?: OomScorePolicy;
  /** Where the ConfigMaps, Secrets and Services a pod references are read; absent: none can be (no cluster). */
  objects?: PodObjectSource;
  /** The pods' ServiceAccount tokens, requested through `objects`. */
  tokens?: TokenCache;
}

/** The kubelet's floor between SIGTERM and SIGKILL (minimumGracePeriodInSeconds). */
export const MIN_GRACE_MS = 2000;
