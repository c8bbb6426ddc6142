/**
 * What the node offers pods, in one place: the API's Node object reports it and the loop's admission
 * checks pods against it, so `kubectl describe node` and a refused pod's message agree.
 */
import { cpus, totalmem } from "node:os";

/** The kubelet's default hard eviction threshold memory.available<100Mi, taken off allocatable memory. */
export const MEMORY_AVAILABLE_MIN_KI = 100 * 1024;
/** The kubelet's default --max-pods. */
export const MAX_PODS = 110;

export interface HostCapacity {
  cpus: number;
  memoryTotalKi: number;
}

/** Allocatable as admission counts it: millicores, bytes and a pod count. */
export interface NodeAllocatable {
  cpuMillis: bigint;
  memoryBytes: bigint;
  pods: number;
}

export function readHostCapacity(): HostCapacity {
  return { cpus: cpus().length, memoryTotalKi: Math.floor(totalmem() / 1024) };
}

/** Capacity less the hard eviction threshold, as the kubelet computes allocatable with nothing reserved. */
export function nodeAllocatable(capacity: HostCapacity, maxPods = MAX_PODS): NodeAllocatable {
  return {
    cpuMillis: BigInt(capacity.cpus) * 1000n,
    memoryBytes: BigInt(Math.max(0, capacity.memoryTotalKi - MEMORY_AVAILABLE_MIN_KI)) * 1024n,
    pods: maxPods,
  };
}
