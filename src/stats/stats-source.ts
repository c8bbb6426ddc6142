/**
 * The seams of the node's statistics: what the kubelet's HTTP server serves (`/stats/summary`, the
 * stats/v1alpha1 Summary; `/metrics/resource`, the Prometheus text metrics-server scrapes) and
 * what the API's metrics.k8s.io reads (each figure as metrics-server computes it: the CPU rate
 * over the window between two samples, memory as the working set).
 */

/** What the kubelet's server (src/server) serves at /stats/summary and /metrics/resource. */
export interface StatsSource {
  /** The stats/v1alpha1 Summary, as JSON-ready data. */
  summary(): Promise<unknown>;
  /** `/metrics/resource` in the Prometheus text format. */
  resourceMetrics(): Promise<string>;
}

/** CPU and memory over one window, as metrics-server serves it. */
export interface UsageWindow {
  /** The newer sample's time, epoch ms. */
  timestamp: number;
  /** Between the two samples, ms. */
  windowMs: number;
  /** Cores in nanocores (billionths of a core). */
  cpuNanoCores: number;
  /** Working set, bytes. */
  memoryBytes: number;
}

export interface ContainerUsageWindow extends UsageWindow {
  name: string;
}

/** What metrics.k8s.io asks: the node's usage and a pod's (by uid), once two samples exist. */
export interface MetricsSource {
  nodeUsage(): UsageWindow | undefined;
  /** Every container of the pod that has two samples of the same attempt; undefined when none has. */
  podUsage(uid: string): ContainerUsageWindow[] | undefined;
}
