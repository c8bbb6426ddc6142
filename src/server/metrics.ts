/**
 * The kubelet's Prometheus figures, kept by prom-client: the recorder the loop, the prober and the
 * PLEG are handed (stats/kubelet-metrics.ts) writes into the registries as things happen, and the two
 * gauges that describe the present (running pods and containers) are read from the loop's records
 * when scraped, as the kubelet reads its runtime cache. Names, help texts, labels and buckets are
 * the kubelet's (pkg/kubelet/metrics, pkg/kubelet/server/metrics, pkg/kubelet/prober); `/metrics`
 * serves `registry`, `/metrics/probes` serves `probes`.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { KubeletMetricsRecorder } from "../stats/kubelet-metrics.ts";
import type { PodRecord } from "../kubelet/pod-state.ts";

/** client_golang's DefBuckets, which the kubelet's histograms use unless they say otherwise. */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

/** component-base marks a metric's stability in its help text. */
const alpha = (help: string) => `[ALPHA] ${help}`;

/** What the gauges read at scrape time: the loop's live pod records. */
export interface LoopView {
  pods(): Iterable<PodRecord>;
}

export interface HttpRequestLabels {
  method: string;
  path: string;
  long_running: "true" | "false";
}

export class KubeletMetrics {
  readonly registry = new Registry();
  readonly probes = new Registry();
  readonly recorder: KubeletMetricsRecorder;
  private readonly httpRequests: Counter<"method" | "path" | "server_type" | "long_running">;
  private readonly httpDuration: Histogram<"method" | "path" | "server_type" | "long_running">;

  constructor(loop: LoopView) {
    const registers = [this.registry];
    new Gauge({
      name: "kubelet_running_pods",
      help: alpha("Number of pods that have a running pod sandbox"),
      registers,
      collect() {
        this.set(countRunningPods(loop.pods()));
      },
    });
    new Gauge({
      name: "kubelet_running_containers",
      help: alpha("Number of containers currently running"),
      labelNames: ["container_state"] as const,
      registers,
      collect() {
        this.reset();
        for (const [state, count] of countContainers(loop.pods())) this.set({ container_state: state }, count);
      },
    });
    const podWorker = new Histogram({ name: "kubelet_pod_worker_duration_seconds", help: alpha("Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync"), labelNames: ["operation_type"] as const, buckets: DEF_BUCKETS, registers });
    const podStart = new Histogram({ name: "kubelet_pod_start_duration_seconds", help: alpha("Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run"), buckets: POD_START_BUCKETS, registers });
    const relist = new Histogram({ name: "kubelet_pleg_relist_duration_seconds", help: alpha("Duration in seconds for relisting pods in PLEG."), buckets: DEF_BUCKETS, registers });
    const relistInterval = new Histogram({ name: "kubelet_pleg_relist_interval_seconds", help: alpha("Interval in seconds between relisting in PLEG."), buckets: DEF_BUCKETS, registers });
    const started = new Counter({ name: "kubelet_started_containers_total", help: alpha("Cumulative number of containers started"), labelNames: ["container_type"] as const, registers });
    const startErrors = new Counter({ name: "kubelet_started_containers_errors_total", help: alpha("Cumulative number of errors when starting containers"), labelNames: ["container_type", "code"] as const, registers });
    const restarted = new Counter({
      name: "kubelet_restarted_pods_total",
      help: alpha("Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)"),
      labelNames: ["static"] as const,
      registers,
    });
    const evictions = new Counter({ name: "kubelet_evictions", help: alpha("Cumulative number of pod evictions by eviction signal"), labelNames: ["eviction_signal"] as const, registers });
    this.httpRequests = new Counter({ name: "kubelet_http_requests_total", help: alpha("Number of the http requests received since the server started"), labelNames: ["method", "path", "server_type", "long_running"] as const, registers });
    this.httpDuration = new Histogram({ name: "kubelet_http_requests_duration_seconds", help: alpha("Duration in seconds to serve http requests"), labelNames: ["method", "path", "server_type", "long_running"] as const, buckets: DEF_BUCKETS, registers });
    const probeTotal = new Counter({
      name: "prober_probe_total",
      help: alpha("Cumulative number of a liveness, readiness or startup probe for a container by result."),
      labelNames: ["probe_type", "result", "container", "pod", "namespace", "pod_uid"] as const,
      registers: [this.probes],
    });
    const probeDuration = new Histogram({
      name: "prober_probe_duration_seconds",
      help: alpha("Duration in seconds for a probe response."),
      labelNames: ["probe_type", "container", "pod", "namespace"] as const,
      buckets: DEF_BUCKETS,
      registers: [this.probes],
    });
    this.recorder = {
      podWorkerDuration: (operation, seconds) => podWorker.observe({ operation_type: operation }, seconds),
      podStartDuration: (seconds) => podStart.observe(seconds),
      plegRelist: (seconds, interval) => {
        relist.observe(seconds);
        if (interval !== undefined) relistInterval.observe(interval);
      },
      containerStarted: (type) => started.inc({ container_type: type }),
      containerStartFailed: (type, code) => startErrors.inc({ container_type: type, code }),
      podRestarted: (isStatic) => restarted.inc({ static: String(isStatic) }),
      podEvicted: (signal) => evictions.inc({ eviction_signal: signal }),
      probed: (type, result, container, pod, seconds) => {
        probeTotal.inc({ probe_type: type, result, container, pod: pod.name, namespace: pod.namespace, pod_uid: pod.uid });
        probeDuration.observe({ probe_type: type, container, pod: pod.name, namespace: pod.namespace }, seconds);
      },
    };
  }

  /**
   * Node mode's requests to the cluster's API server, by verb (WATCH for a watch) and resource, read
   * from the client's counts when scraped. The kubelet's client-go counts only by method and host
   * (rest_client_requests_total); by resource is what says what a node costs the API server, which
   * the API server's own apiserver_request_total cannot tell apart by client.
   */
  countClusterRequests(counts: ReadonlyMap<string, number>): void {
    new Counter({
      name: "minikubelet_cluster_requests_total",
      help: alpha("Number of requests node mode sent to the cluster's API server, by verb (WATCH for a watch) and resource"),
      labelNames: ["verb", "resource"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [key, count] of counts) {
          const [verb = "", resource = ""] = key.split(" ");
          this.inc({ verb, resource }, count);
        }
      },
    });
  }

  /** One request served by the kubelet's server (the only one it has: the read-write server). */
  httpRequest(labels: HttpRequestLabels, seconds: number): void {
    const full = { method: labels.method, path: labels.path, server_type: "readwrite", long_running: labels.long_running };
    this.httpRequests.inc(full);
    this.httpDuration.observe(full, seconds);
  }
}

/** Pods whose sandbox runs: started, and not finished (the kubelet stops a terminal pod's sandbox). */
function countRunningPods(pods: Iterable<PodRecord>): number {
  let count = 0;
  for (const pod of pods) if (pod.sandbox && pod.phase !== "Succeeded" && pod.phase !== "Failed") count++;
  return count;
}

/**
 * The runtime's containers of the loop's pods by the runtime's state names: each current attempt,
 * and the dead one kept for `logs --previous`.
 */
function countContainers(pods: Iterable<PodRecord>): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (state: string) => counts.set(state, (counts.get(state) ?? 0) + 1);
  for (const pod of pods) {
    for (const container of [...pod.init, ...pod.app, ...(pod.ephemeral ?? [])]) {
      // A start resolves once the container runs: an attempt that is not running has exited (waiting to restart, or done).
      if (container.containerId) add(container.state === "running" ? "running" : "exited");
      if (container.previousContainerId && container.previousContainerId !== container.containerId) add("exited");
    }
  }
  return counts;
}
