/**
 * A container's resources as the engine's HostConfig, by the kubelet's own arithmetic
 * (pkg/kubelet/cm/helpers_linux.go and kuberuntime's calculateLinuxResources): memory limit with
 * swap equal to it, CFS quota over a 100 ms period from the cpu limit, cpu.shares from the request.
 */
import type { HostConfig } from "dockerode";
import type { ResourceRequirements } from "../manifest/types.ts";
import { parseQuantity } from "../manifest/quantity.ts";

/** The kernel's minimum cpu.shares, which the kubelet gives a container that requests no cpu. */
export const MIN_SHARES = 2;
/** cgroup v1's ceiling on cpu.shares. */
export const MAX_SHARES = 262144;
const SHARES_PER_CPU = 1024n;
const MILLI_PER_CPU = 1000n;
/** The CFS period the kubelet uses unless the CPUCFSQuotaPeriod gate says otherwise: 100 ms. */
export const CFS_PERIOD_US = 100000;
/** The kernel refuses a quota under 1 ms. */
export const MIN_CFS_QUOTA_US = 1000;

/** milliCPU to cpu.shares (MilliCPUToShares): 1024 per cpu, clamped to the kernel's range. */
export function milliCpuToShares(milliCpu: bigint): number {
  if (milliCpu === 0n) return MIN_SHARES;
  const shares = (milliCpu * SHARES_PER_CPU) / MILLI_PER_CPU;
  if (shares < BigInt(MIN_SHARES)) return MIN_SHARES;
  if (shares > BigInt(MAX_SHARES)) return MAX_SHARES;
  return Number(shares);
}

/** milliCPU to the CFS quota over `period` (MilliCPUToQuota); 0, no limit, when no cpu is limited. */
export function milliCpuToQuota(milliCpu: bigint, period: number = CFS_PERIOD_US): number {
  if (milliCpu === 0n) return 0;
  const quota = (milliCpu * BigInt(period)) / MILLI_PER_CPU;
  return quota < BigInt(MIN_CFS_QUOTA_US) ? MIN_CFS_QUOTA_US : Number(quota);
}

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
