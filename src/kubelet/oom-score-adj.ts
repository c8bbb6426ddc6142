/**
 * The OOM score adjustment the kubelet gives each container's processes
 * (pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust), so the kernel kills BestEffort before
 * Burstable before Guaranteed: -997 for a Guaranteed pod (and a system-node-critical one), 1000 for
 * BestEffort, and for Burstable `1000 - 1000 * request / capacity` of the container's memory
 * request (its share of a pod-level request that no container took added), kept within 3..999,
 * a sidecar's no higher than the lowest app container's. The node's memory capacity is the one its
 * Node reports.
 */
import { parseQuantity } from "../manifest/quantity.ts";
import { aggregateRequests } from "../manifest/pod-requests.ts";
import { podQosClass } from "../manifest/qos.ts";
import type { ContainerSpec, PodSpec } from "../manifest/types.ts";

const GUARANTEED = -997;
const BEST_EFFORT = 1000;
const NODE_CRITICAL_PRIORITY_CLASS = "system-node-critical";

export interface OomScorePolicy {
  memoryCapacityBytes: bigint;
  /**
   * The lowest adjustment this host lets a process take: a negative one needs CAP_SYS_RESOURCE,
   * and a runtime asked for one it cannot set fails the start, so without it Guaranteed pods get 0.
   */
  lowest: number;
}

export function containerOomScoreAdj(pod: PodSpec, container: ContainerSpec, policy: OomScorePolicy): number {
  return Math.max(policy.lowest, kubeletScore(pod, container, policy.memoryCapacityBytes));
}

function kubeletScore(pod: PodSpec, container: ContainerSpec, capacity: bigint): number {
  const priorityClassName = (pod.manifest.spec as { priorityClassName?: unknown } | undefined)?.priorityClassName;
  if (priorityClassName === NODE_CRITICAL_PRIORITY_CLASS) return GUARANTEED;
  const qos = podQosClass([...pod.initContainers, ...pod.containers], pod.resources);
  if (qos === "Guaranteed") return GUARANTEED;
  if (qos === "BestEffort" || capacity <= 0n) return BEST_EFFORT;
  const share = unclaimedPodMemoryPerContainer(pod);
  const score = (request: bigint) => 1000n - (1000n * (request + share)) / capacity;
  let adjust = score(memoryRequest(container));
  const isSidecar = container.restartPolicy === "Always" && pod.initContainers.some((init) => init.name === container.name);
  if (isSidecar && pod.containers.length > 0) {
    const lowestApp = pod.containers.map(memoryRequest).reduce((a, b) => (b < a ? b : a));
    const appScore = score(lowestApp);
    if (adjust > appScore) adjust = appScore;
  }
  if (adjust < BigInt(1000 + GUARANTEED)) return 1000 + GUARANTEED;
  if (adjust === BigInt(BEST_EFFORT)) return BEST_EFFORT - 1;
  return Number(adjust);
}

function memoryRequest(container: ContainerSpec): bigint {
  const request = container.resources?.requests.memory;
  return request === undefined ? 0n : parseQuantity(request).value();
}

/** A pod-level memory request less what the containers request together, shared by every container. */
function unclaimedPodMemoryPerContainer(pod: PodSpec): bigint {
  const podRequest = pod.resources?.requests.memory;
  if (podRequest === undefined) return 0n;
  const total = parseQuantity(podRequest).value();
  if (total === 0n) return 0n;
  const claimed = aggregateRequests(pod.containers, pod.initContainers).get("memory")?.value() ?? 0n;
  const remaining = total > claimed ? total - claimed : 0n;
  return remaining / BigInt(pod.containers.length + pod.initContainers.length);
}
