/**
 * The process runtime's cgroups on fake trees (v1 and v2 layouts in a temp dir): which layout a
 * mountinfo describes, the files a container's limits become, the OOM counters, removal, and the
 * unavailable case.
 */
import { afterEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cgroups, detectCgroupMode, limitsFromResources, sharesToWeight } from "../../src/runtime/process/cgroups.ts";
import { milliCpuToShares } from "../../src/runtime/milli-cpu.ts";
import { fakeV1, fakeV2 } from "../cgroup-fixtures.ts";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mk-cgroups-"));
  temps.push(dir);
  return dir;
}

const read = (file: string): string => readFileSync(file, "utf8").trim();

test("a v1 host (with the hybrid's empty cgroup2) is v1; a unified tree with memory is v2", () => {
  const v1 = tempDir();
  expect(detectCgroupMode(fakeV1(v1))).toEqual({ kind: "v1", memory: join(v1, "memory"), cpu: join(v1, "cpu"), pids: join(v1, "pids") });
  const v2 = tempDir();
  expect(detectCgroupMode(fakeV2(v2))).toEqual({ kind: "v2", root: v2 });
});

test("no memory controller anywhere is unavailable, with the reason", () => {
  const v2 = tempDir();
  expect(detectCgroupMode(fakeV2(v2, "cpu pids"))).toEqual({ kind: "unavailable", reason: `cgroup v2 at ${v2} offers no memory controller` });
  expect(detectCgroupMode("22 1 0:21 / /proc rw - proc proc rw")).toEqual({ kind: "unavailable", reason: "no cgroup memory controller is mounted" });
});

test("limits follow the kubelet's formulas: bytes, CFS quota, shares and weight", () => {
  const limits = limitsFromResources({ limits: { memory: "16Mi", cpu: "500m" }, requests: { cpu: "250m", memory: "8Mi" } }, 100);
  expect(limits).toEqual({ memoryBytes: 16n * 1024n * 1024n, cpuLimitMillis: 500n, cpuShares: 256n, pidsMax: 100 });
  expect(limitsFromResources(undefined)).toEqual({});
  expect(milliCpuToShares(1n)).toBe(2);
  expect(milliCpuToShares(0n)).toBe(2);
  expect(milliCpuToShares(1000n)).toBe(1024);
  expect(sharesToWeight(2n)).toBe(1n);
  expect(sharesToWeight(1024n)).toBe(39n);
  expect(sharesToWeight(262_144n)).toBe(10_000n);
});

test("v1: each controller's cgroup under minikubelet/<identity>/<id> holds the limits; removal takes them all", () => {
  const root = tempDir();
  const cgroups = new Cgroups(detectCgroupMode(fakeV1(root)), "db1");
  expect(cgroups.prepare()).toBeUndefined();
  const created = cgroups.create("c1", { memoryBytes: 16_777_216n, cpuLimitMillis: 1500n, cpuShares: 512n, pidsMax: 64 });
  const memory = join(root, "memory", "minikubelet", "db1", "c1");
  const cpu = join(root, "cpu", "minikubelet", "db1", "c1");
  const pids = join(root, "pids", "minikubelet", "db1", "c1");
  // Joined by `tasks`: the monitor's child moves its own single thread, which spares the kernel's
  // global threadgroup lock (an RCU grace period per start) that moving a process by cgroup.procs takes.
  expect(created).toEqual({ join: [join(memory, "tasks"), join(cpu, "tasks"), join(pids, "tasks")] });
  expect(read(join(memory, "memory.limit_in_bytes"))).toBe("16777216");
  expect(read(join(memory, "memory.memsw.limit_in_bytes"))).toBe("16777216");
  expect(read(join(cpu, "cpu.cfs_period_us"))).toBe("100000");
  expect(read(join(cpu, "cpu.cfs_quota_us"))).toBe("150000");
  expect(read(join(cpu, "cpu.shares"))).toBe("512");
  expect(read(join(pids, "pids.max"))).toBe("64");
  cgroups.remove("c1");
  for (const dir of [memory, cpu, pids]) expect(existsSync(dir)).toBe(false);
  expect(existsSync(join(root, "memory", "minikubelet", "db1"))).toBe(true);
});

test("v1 without swap accounting writes no memsw limit; a container without limits still gets a memory cgroup", () => {
  const root = tempDir();
  const cgroups = new Cgroups(detectCgroupMode(fakeV1(root, { memsw: false })), "db1");
  cgroups.prepare();
  cgroups.create("c1", { memoryBytes: 1_048_576n });
  expect(existsSync(join(root, "memory", "minikubelet", "db1", "c1", "memory.memsw.limit_in_bytes"))).toBe(false);
  // Its OOM counter is read from the memory cgroup, so every container has one.
  expect(cgroups.create("c2", {})).toEqual({ join: [join(root, "memory", "minikubelet", "db1", "c2", "tasks")] });
});

test("v2: controllers are handed down to minikubelet/<identity>, and one cgroup holds every limit", () => {
  const root = tempDir();
  const cgroups = new Cgroups(detectCgroupMode(fakeV2(root)), "db2");
  expect(cgroups.prepare()).toBeUndefined();
  expect(read(join(root, "cgroup.subtree_control"))).toBe("+memory +cpu +pids");
  // The parent's own controller files, as the kernel would show them once memory is enabled above it.
  writeFileSync(join(root, "minikubelet", "db2", "memory.swap.max"), "max\n");
  const dir = join(root, "minikubelet", "db2", "c1");
  expect(cgroups.create("c1", { memoryBytes: 16_777_216n, cpuLimitMillis: 250n, cpuShares: 1024n, pidsMax: 10 })).toEqual({ join: [join(dir, "cgroup.procs")] });
  expect(read(join(dir, "memory.max"))).toBe("16777216");
  expect(read(join(dir, "memory.swap.max"))).toBe("0");
  expect(read(join(dir, "cpu.max"))).toBe("25000 100000");
  expect(read(join(dir, "cpu.weight"))).toBe("39");
  expect(read(join(dir, "pids.max"))).toBe("10");
  cgroups.remove("c1");
  expect(existsSync(dir)).toBe(false);
  rmSync(join(root, "minikubelet", "db2", "memory.swap.max"));
  cgroups.release();
  expect(existsSync(join(root, "minikubelet", "db2"))).toBe(false);
});

test("a cpu limit of 0 is written as the kernel's 1 ms minimum quota, on v1 and v2 (docker's CpuQuota 0 is no limit)", () => {
  const v1 = tempDir();
  const onV1 = new Cgroups(detectCgroupMode(fakeV1(v1)), "db1");
  onV1.prepare();
  onV1.create("c1", { cpuLimitMillis: 0n });
  expect(read(join(v1, "cpu", "minikubelet", "db1", "c1", "cpu.cfs_quota_us"))).toBe("1000");
  const v2 = tempDir();
  const onV2 = new Cgroups(detectCgroupMode(fakeV2(v2)), "db2");
  onV2.prepare();
  onV2.create("c1", { cpuLimitMillis: 0n });
  expect(read(join(v2, "minikubelet", "db2", "c1", "cpu.max"))).toBe("1000 100000");
});

test("release leaves the agent's parent while a container's cgroup is in it", () => {
  const root = tempDir();
  const cgroups = new Cgroups(detectCgroupMode(fakeV1(root)), "db1");
  cgroups.prepare();
  cgroups.create("c1", {});
  // Its limit files stand in for the kernel's: a fake directory with files is not empty either.
  writeFileSync(join(root, "memory", "minikubelet", "db1", "c1", "memory.limit_in_bytes"), "max\n");
  cgroups.release();
  expect(existsSync(join(root, "memory", "minikubelet", "db1", "c1"))).toBe(true);
  cgroups.remove("c1");
  cgroups.release();
  expect(existsSync(join(root, "memory", "minikubelet", "db1"))).toBe(false);
  expect(existsSync(join(root, "cpu", "minikubelet", "db1"))).toBe(false);
});

test("the OOM counters: v1 memory.oom_control and v2 memory.events say oom_kill > 0", () => {
  const v1Root = tempDir();
  const v1 = new Cgroups(detectCgroupMode(fakeV1(v1Root)), "db");
  v1.prepare();
  v1.create("c1", { memoryBytes: 1n << 20n });
  const oomControl = join(v1Root, "memory", "minikubelet", "db", "c1", "memory.oom_control");
  writeFileSync(oomControl, "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  expect(v1.oomKilled("c1", 137)).toBe(false);
  writeFileSync(oomControl, "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  expect(v1.oomKilled("c1", 137)).toBe(true);
  expect(v1.oomKilled("gone", 137)).toBe(false);
  // A kernel before 4.13 has no oom_kill line: a SIGKILL after the limit was hit stands for one.
  writeFileSync(oomControl, "oom_kill_disable 0\nunder_oom 0\n");
  writeFileSync(join(v1Root, "memory", "minikubelet", "db", "c1", "memory.failcnt"), "0\n");
  expect(v1.oomKilled("c1", 137)).toBe(false);
  writeFileSync(join(v1Root, "memory", "minikubelet", "db", "c1", "memory.failcnt"), "12\n");
  expect(v1.oomKilled("c1", 137)).toBe(true);
  expect(v1.oomKilled("c1", 1)).toBe(false);

  const v2Root = tempDir();
  const v2 = new Cgroups(detectCgroupMode(fakeV2(v2Root)), "db");
  v2.prepare();
  v2.create("c1", { memoryBytes: 1n << 20n });
  const events = join(v2Root, "minikubelet", "db", "c1", "memory.events");
  writeFileSync(events, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n");
  expect(v2.oomKilled("c1", 137)).toBe(false);
  writeFileSync(events, "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n");
  expect(v2.oomKilled("c1", 137)).toBe(true);
});

test("a tree that cannot be written is unavailable: prepare says why, create refuses without throwing", () => {
  if (process.getuid?.() === 0) {
    // Root writes through permissions: a missing controller stands in for a read-only tree.
    const cgroups = new Cgroups(detectCgroupMode(""), "db");
    expect(cgroups.prepare()).toBe("no cgroup memory controller is mounted");
    expect(cgroups.available).toBe(false);
    expect(cgroups.create("c1", { memoryBytes: 1n })).toEqual({ problem: "no cgroup memory controller is mounted" });
    expect(cgroups.oomKilled("c1", 137)).toBe(false);
    cgroups.remove("c1");
    return;
  }
  const root = tempDir();
  const mountinfo = fakeV1(root);
  chmodSync(join(root, "memory"), 0o555);
  const cgroups = new Cgroups(detectCgroupMode(mountinfo), "db");
  expect(cgroups.prepare()).toMatch(/^cannot write cgroups: EACCES/);
  expect(cgroups.create("c1", { memoryBytes: 1n })).toEqual({ problem: expect.stringMatching(/^cannot write cgroups/) });
});

test("a file the kernel refuses turns into a problem for that container, and its half-made cgroup is removed", () => {
  const root = tempDir();
  const cgroups = new Cgroups(detectCgroupMode(fakeV1(root)), "db");
  cgroups.prepare();
  // A directory where the limit file should be: the write fails as a refused value would.
  mkdirSync(join(root, "memory", "minikubelet", "db", "c1", "memory.limit_in_bytes"), { recursive: true });
  const result = cgroups.create("c1", { memoryBytes: 1n });
  expect(result).toEqual({ problem: expect.stringMatching(/^cannot write the cgroup of c1: EISDIR/) });
  expect(existsSync(join(root, "memory", "minikubelet", "db", "c1"))).toBe(false);
});
