/**
 * The seam through which the loop, the prober and the PLEG report what the kubelet's /metrics
 * counts, as each happens (a container started, a probe settled, a relist ended). The subsystems
 * are handed a recorder and never know who keeps the figures (the kubelet server's Prometheus
 * registry under `run`, nothing in most tests); the figures are never recomputed from history.
 */

/** The kubelet's `container_type` label values. */
export type MetricContainerType = "container" | "init_container" | "ephemeral_container";

/** The kubelet's pod worker `operation_type`: a pod's first pass, a pass after its spec changed, any other, one that stops it. */
export type PodWorkerOperation = "create" | "update" | "sync" | "kill";

/** The prober's `probe_type` and `result` label values. */
export type ProbeMetricType = "Liveness" | "Readiness" | "Startup";
export type ProbeMetricResult = "successful" | "failed" | "unknown";

/** Which pod a probe's figures belong to (the prober's per-container labels). */
export interface ProbedPod {
  namespace: string;
  name: string;
  uid: string;
}

export interface KubeletMetricsRecorder {
  /** One pass of a pod worker took `seconds`. */
  podWorkerDuration(operation: PodWorkerOperation, seconds: number): void;
  /** A pod reached Running `seconds` after the loop first saw it. */
  podStartDuration(seconds: number): void;
  /** A PLEG relist took `seconds`; `intervalSeconds` since the one before started (none for the first). */
  plegRelist(seconds: number, intervalSeconds: number | undefined): void;
  /** A container start was asked of the runtime. */
  containerStarted(type: MetricContainerType): void;
  /** ... and failed with this code. */
  containerStartFailed(type: MetricContainerType, code: string): void;
  /** A pod was stopped and started again under the same uid (`isStatic`: from the manifest directory). */
  podRestarted(isStatic: boolean): void;
  /** A pod was evicted for `signal` (the kubelet's eviction signal name, `emptydirfs.limit`). */
  podEvicted(signal: string): void;
  /** One probe run settled. */
  probed(type: ProbeMetricType, result: ProbeMetricResult, container: string, pod: ProbedPod, seconds: number): void;
}

/** Records nothing: what a subsystem uses when it is given no recorder. */
export const NO_METRICS: KubeletMetricsRecorder = {
  podWorkerDuration: () => {},
  podStartDuration: () => {},
  plegRelist: () => {},
  containerStarted: () => {},
  containerStartFailed: () => {},
  podRestarted: () => {},
  podEvicted: () => {},
  probed: () => {},
};
