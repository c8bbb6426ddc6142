/** The kubelet's cgroup arithmetic for docker containers (pkg/kubelet/cm/helpers_linux.go). */
import { describe, expect, test } from "bun:test";
import { podMaxPidsOption } from "../../src/cli/options.ts";
import { resourceHostConfig } from "../../src/runtime/docker/docker-resources.ts";
import { milliCpuToQuota, milliCpuToShares } from "../../src/runtime/milli-cpu.ts";

describe("cpu shares from the request", () => {
  test("1024 per cpu, rounded down; none requested or a sliver gets the kernel's minimum of 2", () => {
    expect(milliCpuToShares(1000n)).toBe(1024);
    expect(milliCpuToShares(250n)).toBe(256);
    expect(milliCpuToShares(100n)).toBe(102);
    expect(milliCpuToShares(0n)).toBe(2);
    expect(milliCpuToShares(1n)).toBe(2);
  });

  test("capped at cgroup v1's 262144", () => {
    expect(milliCpuToShares(256000n)).toBe(262144);
    expect(milliCpuToShares(300000n)).toBe(262144);
  });
});

describe("cfs quota from the limit", () => {
  test("milliCPU x period / 1000, at least 1 ms; no limit is 0", () => {
    expect(milliCpuToQuota(500n)).toBe(50000);
    expect(milliCpuToQuota(2000n)).toBe(200000);
    expect(milliCpuToQuota(10n)).toBe(1000);
    expect(milliCpuToQuota(15n)).toBe(1500);
    expect(milliCpuToQuota(1n)).toBe(1000);
    expect(milliCpuToQuota(0n)).toBe(0);
    expect(milliCpuToQuota(250n, 50000)).toBe(12500);
  });
});

describe("host config", () => {
  test("memory limit with swap equal to it, quota over 100 ms from the limit, shares from the request", () => {
    const config = resourceHostConfig({ limits: { cpu: "500m", memory: "128Mi" }, requests: { cpu: "250m", memory: "64Mi" } });
    expect(config).toEqual({ Memory: 134217728, MemorySwap: 134217728, CpuShares: 256, CpuPeriod: 100000, CpuQuota: 50000 });
  });

  test("a fractional memory quantity rounds up to whole bytes, as Quantity.Value does", () => {
    expect(resourceHostConfig({ limits: { memory: "1.5k" }, requests: {} }).Memory).toBe(1500);
    expect(resourceHostConfig({ limits: { memory: "100m" }, requests: {} }).Memory).toBe(1);
  });

  test("BestEffort: no memory or cpu limit (0 is the engine's none) and the minimum shares", () => {
    expect(resourceHostConfig(undefined)).toEqual({ Memory: 0, MemorySwap: 0, CpuShares: 2, CpuPeriod: 100000, CpuQuota: 0 });
    expect(resourceHostConfig({ limits: {}, requests: {} })).toEqual(resourceHostConfig(undefined));
  });

  test("a request without a limit sets shares only; a limit without a request gives shares from the limit", () => {
    expect(resourceHostConfig({ limits: {}, requests: { cpu: "2" } })).toMatchObject({ CpuShares: 2048, CpuQuota: 0, Memory: 0 });
    expect(resourceHostConfig({ limits: { cpu: "1" }, requests: {} })).toMatchObject({ CpuShares: 1024, CpuQuota: 100000 });
  });

  test("the pids limit comes from the node flag only; unset means unlimited", () => {
    expect(resourceHostConfig(undefined).PidsLimit).toBeUndefined();
    expect(resourceHostConfig(undefined, { podMaxPids: 64 }).PidsLimit).toBe(64);
  });
});

describe("--pod-max-pids", () => {
  test("a positive count is the limit; -1 and absent are no limit", () => {
    expect(podMaxPidsOption("64")).toBe(64);
    expect(podMaxPidsOption(64)).toBe(64);
    expect(podMaxPidsOption("-1")).toBeUndefined();
    expect(podMaxPidsOption(undefined)).toBeUndefined();
  });
});
