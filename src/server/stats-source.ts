/**
 * Where `/stats/summary` and `/metrics/resource` come from: the stats provider (src/stats/), which
 * this server only routes to. A summary is the kubelet's stats/v1alpha1 Summary; the resource
 * metrics are Prometheus text, the names metrics-server reads.
 */
export interface StatsSource {
  summary(): Promise<unknown>;
  resourceMetrics(): Promise<string>;
}
