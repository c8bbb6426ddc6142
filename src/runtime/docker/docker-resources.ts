/**
 * A container's resources as the engine's HostConfig, as kuberuntime's calculateLinuxResources
 * sets them: memory limit with swap equal to it, CFS quota over a 100 ms period from the cpu limit,
 * cpu.shares from the request (the kubelet's arithmetic, milli-cpu.ts).
 */
import type { HostConfig } from "dockerode";
import type { ResourceRequirements } from "../../manifest/types.ts";
import { parseQuantity } from "../../manifest/quantity.ts";
import { CFS_PERIOD_US, milliCpuToQuota, milliCpuToShares } from "../milli-cpu.ts";

/** The node's settings that shape every container, beside the container's own resources. */
export interface NodeResourcePolicy {
  /** `run --pod-max-pids`; absent, no limit (the kubelet's -1). */
  podMaxPids?: number;
}

type ResourceHostConfig = Pick<HostConfig, "Memory" | "MemorySwap" | "CpuShares" | "CpuPeriod" | "CpuQuota" | "PidsLimit">;

/**
 * The HostConfig fields for one container. Unset memory and cpu limits stay 0 (the engine's "no
 * limit"); a container requesting no cpu gets the minimum shares, as a BestEffort one does under
 * the kubelet. Requests were already defaulted from limits when the manifest was read.
 */
export function resourceHostConfig(resources: ResourceRequirements | undefined, node: NodeResourcePolicy = {}): ResourceHostConfig {
  const memoryLimit = quantityValue(resources?.limits.memory);
  const cpuLimit = milliValue(resources?.limits.cpu);
  const cpuRequest = milliValue(resources?.requests.cpu ?? resources?.limits.cpu);
  const config: ResourceHostConfig = {
    Memory: memoryLimit,
    // Swap equal to the memory limit: the engine's way of saying "no swap" (dockershim did the same).
    MemorySwap: memoryLimit,
    CpuShares: milliCpuToShares(cpuRequest),
    CpuPeriod: CFS_PERIOD_US,
    CpuQuota: milliCpuToQuota(cpuLimit),
  };
  if (node.podMaxPids !== undefined && node.podMaxPids > 0) config.PidsLimit = node.podMaxPids;
  return config;
}

function milliValue(quantity: string | undefined): bigint {
  return quantity === undefined ? 0n : parseQuantity(quantity).milliValue();
}

function quantityValue(quantity: string | undefined): number {
  return quantity === undefined ? 0 : Number(parseQuantity(quantity).value());
}
