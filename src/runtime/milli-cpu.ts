/**
 * The kubelet's cpu arithmetic (pkg/kubelet/cm/helpers_linux.go), once for both runtimes: the
 * process runtime writes it to the container's cgroup (cgroups.ts), docker hands it to the engine
 * (docker-resources.ts). A cpu quantity is read as milliCPU, thousandths of a core.
 */

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
