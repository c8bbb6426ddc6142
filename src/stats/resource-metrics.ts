/**
 * `/metrics/resource`: the kubelet's resource metrics collector (pkg/kubelet/metrics/collectors/
 * resource_metrics.go), with its names, help texts (component-base's stability prefix), labels and
 * a timestamp per sample (the reading's own time, which metrics-server's rate uses). Drawn from the
 * readings, not the Summary, so times keep their milliseconds; swap where the cgroup accounts it. `scrape_error`, deprecated in 1.29,
 * is hidden in 1.35 as component-base hides a metric deprecated two releases back.
 */
import { exposition, type Family, type Sample } from "./exposition.ts";
import type { ContainerSamples, SampleSet } from "./samples.ts";

const NANOS = 1e9;

export function resourceMetricsText(samples: SampleSet): string {
  const node = samples.node?.last;
  const nodeCpu: Sample[] = node?.cpuUsageCoreNanoSeconds !== undefined ? [{ value: node.cpuUsageCoreNanoSeconds / NANOS, at: node.at }] : [];
  const nodeMemory: Sample[] = node?.memory ? [{ value: node.memory.workingSetBytes, at: node.at }] : [];
  const nodeSwap: Sample[] = node?.swap ? [{ value: node.swap.usageBytes, at: node.at }] : [];
  const containers = [...samples.containers.values()].sort(byPodThenName);
  // Sorted by name, as client_golang writes them.
  const labels = (c: ContainerSamples) => ({ container: c.ref.name, namespace: c.ref.namespace, pod: c.ref.podName });
  const pods = new Map<string, ContainerSamples[]>();
  for (const container of containers) pods.set(container.ref.podUid, [...(pods.get(container.ref.podUid) ?? []), container]);
  const podCpu: Sample[] = [];
  const podMemory: Sample[] = [];
  const podSwap: Sample[] = [];
  for (const list of pods.values()) {
    const { podName: pod, namespace } = list[0]!.ref;
    const at = Math.max(...list.map((c) => c.last.at));
    if (list.every((c) => c.last.cpuUsageCoreNanoSeconds !== undefined)) podCpu.push({ labels: { namespace, pod }, value: list.reduce((sum, c) => sum + c.last.cpuUsageCoreNanoSeconds!, 0) / NANOS, at });
    if (list.every((c) => c.last.swap)) podSwap.push({ labels: { namespace, pod }, value: list.reduce((sum, c) => sum + c.last.swap!.usageBytes, 0), at });
    if (list.every((c) => c.last.memory)) podMemory.push({ labels: { namespace, pod }, value: list.reduce((sum, c) => sum + c.last.memory!.workingSetBytes, 0), at });
  }
  const failed = samples.error === undefined ? 0 : 1;
  const families: Family[] = [
    { name: "container_cpu_usage_seconds_total", help: "[STABLE] Cumulative cpu time consumed by the container in core-seconds", type: "counter", samples: containers.flatMap((c) => (c.last.cpuUsageCoreNanoSeconds === undefined ? [] : [{ labels: labels(c), value: c.last.cpuUsageCoreNanoSeconds / NANOS, at: c.last.at }])) },
    { name: "container_memory_working_set_bytes", help: "[STABLE] Current working set of the container in bytes", type: "gauge", samples: containers.flatMap((c) => (c.last.memory ? [{ labels: labels(c), value: c.last.memory.workingSetBytes, at: c.last.at }] : [])) },
    { name: "container_start_time_seconds", help: "[STABLE] Start time of the container since unix epoch in seconds", type: "gauge", samples: containers.flatMap((c) => (c.ref.startedAt > 0 ? [{ labels: labels(c), value: c.ref.startedAt / 1000 }] : [])) },
    // The limit is what may still be swapped plus what is, as the kubelet adds them.
    { name: "container_swap_limit_bytes", help: "[ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems", type: "gauge", samples: containers.flatMap((c) => (c.last.swap?.availableBytes !== undefined ? [{ labels: labels(c), value: c.last.swap.availableBytes + c.last.swap.usageBytes, at: c.last.at }] : [])) },
    { name: "container_swap_usage_bytes", help: "[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems", type: "gauge", samples: containers.flatMap((c) => (c.last.swap ? [{ labels: labels(c), value: c.last.swap.usageBytes, at: c.last.at }] : [])) },
    { name: "node_cpu_usage_seconds_total", help: "[STABLE] Cumulative cpu time consumed by the node in core-seconds", type: "counter", samples: nodeCpu },
    { name: "node_memory_working_set_bytes", help: "[STABLE] Current working set of the node in bytes", type: "gauge", samples: nodeMemory },
    { name: "node_swap_usage_bytes", help: "[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems", type: "gauge", samples: nodeSwap },
    { name: "pod_cpu_usage_seconds_total", help: "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", type: "counter", samples: podCpu },
    { name: "pod_memory_working_set_bytes", help: "[STABLE] Current working set of the pod in bytes", type: "gauge", samples: podMemory },
    { name: "pod_swap_usage_bytes", help: "[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems", type: "gauge", samples: podSwap },
    { name: "resource_scrape_error", help: "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", type: "gauge", samples: [{ value: failed }] },
  ];
  // Like client_golang's registry: families by name, and a family without samples is not written.
  return exposition(families.filter((family) => family.samples.length > 0));
}

function byPodThenName(a: ContainerSamples, b: ContainerSamples): number {
  const key = (c: ContainerSamples) => `${c.ref.namespace}\u0000${c.ref.podName}\u0000${c.ref.name}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}
