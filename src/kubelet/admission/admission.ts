/**
 * The kubelet's resource admission (pkg/kubelet/lifecycle/predicate.go, which runs the scheduler's
 * noderesources fit on the node's own view): a new pod is refused when its requests do not fit in
 * allocatable beside the pods already admitted. Pure: the loop says which pods count.
 */
import type { PodSpec } from "../../manifest/types.ts";
import { parseQuantity } from "../../manifest/quantity.ts";
import { aggregateRequests } from "../../manifest/pod-requests.ts";
import type { NodeAllocatable } from "../../eviction/node-allocatable.ts";

/** cpu in millicores, memory and ephemeral-storage in bytes: the units of the kubelet's message. */
export interface PodRequests {
  cpuMillis: bigint;
  memoryBytes: bigint;
  ephemeralStorageBytes: bigint;
}

export interface AdmissionRefusal {
  /** `OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage`, `OutOfpods`: `OutOf` and the resource name, as the kubelet spells it. */
  reason: string;
  /** The kubelet's InsufficientResourceError text; the pod's status message prefixes `Pod was rejected: `. */
  message: string;
}

/**
 * How a pod waiting for DiskPressure to clear is shown: as a cluster's scheduler reports a pod it
 * cannot place on a node tainted node.kubernetes.io/disk-pressure (the kubelet itself would reject a
 * static pod; issue 14 asks that new pods wait instead).
 */
export const DISK_PRESSURE_WAIT = {
  reason: "FailedScheduling",
  message: "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
} as const;

const NONE: PodRequests = { cpuMillis: 0n, memoryBytes: 0n, ephemeralStorageBytes: 0n };

/**
 * The pod's effective request (the pod resource helper's PodRequests): what its containers request
 * together (pod-requests.ts), where a pod-level request of cpu or memory (spec.resources) stands
 * for the pod's.
 */
export function podRequests(spec: Pick<PodSpec, "containers" | "initContainers" | "resources">): PodRequests {
  const aggregate = aggregateRequests(spec.containers, spec.initContainers);
  const podLevel = spec.resources?.requests ?? {};
  const cpu = podLevel.cpu !== undefined ? parseQuantity(podLevel.cpu) : aggregate.get("cpu");
  const memory = podLevel.memory !== undefined ? parseQuantity(podLevel.memory) : aggregate.get("memory");
  return { cpuMillis: cpu?.milliValue() ?? 0n, memoryBytes: memory?.value() ?? 0n, ephemeralStorageBytes: aggregate.get("ephemeral-storage")?.value() ?? 0n };
}

/**
 * Refuses the pod with the first resource that does not fit, in the scheduler's order (pods, cpu,
 * memory, ephemeral-storage); undefined when it fits. `admitted` are the requests of the pods already admitted and not
 * finished.
 */
export function admissionRefusal(pod: PodRequests, admitted: readonly PodRequests[], allocatable: NodeAllocatable): AdmissionRefusal | undefined {
  if (admitted.length + 1 > allocatable.pods) return refusal("pods", 1n, BigInt(admitted.length), BigInt(allocatable.pods));
  const used = admitted.reduce(add, NONE);
  if (pod.cpuMillis > 0n && pod.cpuMillis > allocatable.cpuMillis - used.cpuMillis) return refusal("cpu", pod.cpuMillis, used.cpuMillis, allocatable.cpuMillis);
  if (pod.memoryBytes > 0n && pod.memoryBytes > allocatable.memoryBytes - used.memoryBytes) {
    return refusal("memory", pod.memoryBytes, used.memoryBytes, allocatable.memoryBytes);
  }
  if (pod.ephemeralStorageBytes > 0n && pod.ephemeralStorageBytes > allocatable.ephemeralStorageBytes - used.ephemeralStorageBytes) {
    return refusal("ephemeral-storage", pod.ephemeralStorageBytes, used.ephemeralStorageBytes, allocatable.ephemeralStorageBytes);
  }
  return undefined;
}

function refusal(resource: string, requested: bigint, used: bigint, capacity: bigint): AdmissionRefusal {
  return {
    reason: `OutOf${resource}`,
    message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}

function add(a: PodRequests, b: PodRequests): PodRequests {
  return { cpuMillis: a.cpuMillis + b.cpuMillis, memoryBytes: a.memoryBytes + b.memoryBytes, ephemeralStorageBytes: a.ephemeralStorageBytes + b.ephemeralStorageBytes };
}

