/**
 * Cgroups for the process runtime: each container attempt gets its own cgroup under
 * `minikubelet/<database identity>/<container id>` (the identity keeps two agents on one host
 * apart), with the memory, cpu and pids limits its resources ask for. On v1 that is one directory
 * per controller hierarchy; on v2 one directory in the unified tree.
 *
 * The runtime only creates and fills the cgroup; the monitor puts the container's own process in it
 * before it execs the command, so no allocation escapes. It joins by writing `0` (itself) to each
 * join file (JOIN_FILE): on v1 that is `tasks`, the single thread it is, since moving a whole thread
 * group (`cgroup.procs`) takes the kernel's global threadgroup lock and waits out an RCU grace
 * period, some 7 ms on every start; moving the writer's own thread is exempt.
 * Where cgroups cannot be used (not root, read-only, a controller missing) the mode is
 * `unavailable` with a reason, and containers run without limits rather than fail.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ResourceRequirements } from "../../manifest/types.ts";
import { parseQuantity } from "../../manifest/quantity.ts";
import { CFS_PERIOD_US, MIN_CFS_QUOTA_US, milliCpuToQuota, milliCpuToShares } from "../milli-cpu.ts";
import type { UsageDirs } from "./cgroup-usage.ts";
import { parseMountinfo, readMountinfo } from "../../host/mountinfo.ts";

/**
 * The file a process joins a cgroup by, writing `0`. v2 has no `tasks` outside threaded subtrees:
 * there the whole process moves (clone3's CLONE_INTO_CGROUP would spare the lock; not done).
 */
export const JOIN_FILE = { v1: "tasks", v2: "cgroup.procs" } as const;

export type CgroupMode =
  /** `cpuacct` is the accounting hierarchy (the same directory as `cpu` where the two are mounted together). */
  | { kind: "v1"; memory: string; cpu: string | undefined; pids: string | undefined; cpuacct?: string }
  | { kind: "v2"; root: string }
  | { kind: "unavailable"; reason: string };

/** What a container's cgroup enforces; each field absent when the spec sets no such limit. */
export interface CgroupLimits {
  memoryBytes?: bigint;
  /** CPU limit in thousandths of a core. */
  cpuLimitMillis?: bigint;
  /** v1 cpu.shares, from the CPU request by the kubelet's MilliCPUToShares (milli-cpu.ts). */
  cpuShares?: bigint;
  pidsMax?: number;
}

export function limitsFromResources(resources: ResourceRequirements | undefined, pidsMax?: number): CgroupLimits {
  const limits: CgroupLimits = {};
  const memory = resources?.limits.memory;
  if (memory !== undefined) limits.memoryBytes = parseQuantity(memory).value();
  const cpu = resources?.limits.cpu;
  if (cpu !== undefined) limits.cpuLimitMillis = parseQuantity(cpu).milliValue();
  const request = resources?.requests.cpu;
  if (request !== undefined) limits.cpuShares = BigInt(milliCpuToShares(parseQuantity(request).milliValue()));
  if (pidsMax !== undefined) limits.pidsMax = pidsMax;
  return limits;
}

/**
 * The CFS quota written for a cpu limit: MilliCPUToQuota over the 100 ms period. For a limit of 0
 * that is 0, the kubelet's "no quota"; this runtime has always written the kernel's 1 ms minimum
 * then (docker's CpuQuota 0 is no limit, so the runtimes differ for `cpu: 0`), and still does.
 */
function cfsQuotaUs(milliCpu: bigint): number {
  return Math.max(milliCpuToQuota(milliCpu), MIN_CFS_QUOTA_US);
}

/** cpu.weight on v2 from v1 shares: the formula runc and the kubelet use (1..10000). */
export function sharesToWeight(shares: bigint): bigint {
  return 1n + ((shares - 2n) * 9999n) / 262_142n;
}

/**
 * Which cgroup layout `mountinfo` describes. v1 needs a memory hierarchy of its own (cpu and pids
 * are used when mounted); v2 needs the unified tree to offer the memory controller. A hybrid host
 * (v1 controllers plus an empty cgroup2 at /sys/fs/cgroup/unified) is v1.
 */
export function detectCgroupMode(mountinfo: string): CgroupMode {
  const v1 = new Map<string, string>();
  let unified: string | undefined;
  for (const { mountPoint, fsType, superOptions } of parseMountinfo(mountinfo)) {
    if (fsType === "cgroup2") unified ??= mountPoint;
    if (fsType === "cgroup") for (const option of superOptions) if (!v1.has(option)) v1.set(option, mountPoint);
  }
  const memory = v1.get("memory");
  if (memory) return { kind: "v1", memory, cpu: v1.get("cpu"), pids: v1.get("pids"), cpuacct: v1.get("cpuacct") };
  if (unified) {
    const controllers = readText(join(unified, "cgroup.controllers"))?.split(/\s+/) ?? [];
    if (controllers.includes("memory")) return { kind: "v2", root: unified };
    return { kind: "unavailable", reason: `cgroup v2 at ${unified} offers no memory controller` };
  }
  return { kind: "unavailable", reason: "no cgroup memory controller is mounted" };
}

export function detectHostCgroupMode(): CgroupMode {
  const mountinfo = readMountinfo();
  return mountinfo === undefined ? { kind: "unavailable", reason: "/proc/self/mountinfo is unreadable" } : detectCgroupMode(mountinfo);
}

export class Cgroups {
  private mode: CgroupMode;
  private readonly parent: string;

  /** `identity` names this agent's database; it must be usable as a directory name. */
  constructor(mode: CgroupMode, identity: string) {
    this.mode = mode;
    this.parent = join("minikubelet", identity);
  }

  /**
   * Creates the agent's parent cgroups; on failure the mode turns unavailable. Returns the reason
   * cgroups cannot be used, for the agent to say once at start-up, or undefined when they can.
   */
  prepare(): string | undefined {
    if (this.mode.kind === "unavailable") return this.mode.reason;
    try {
      if (this.mode.kind === "v2") {
        // Each level hands the controllers down, or its children could not set limits.
        let dir = this.mode.root;
        for (const part of this.parent.split("/")) {
          enableControllers(dir);
          dir = join(dir, part);
          mkdirSync(dir, { recursive: true });
        }
        enableControllers(dir);
      } else {
        for (const root of this.v1Roots()) mkdirSync(join(root, this.parent), { recursive: true });
      }
      return undefined;
    } catch (error) {
      this.mode = { kind: "unavailable", reason: `cannot write cgroups: ${(error as Error).message}` };
      return this.mode.reason;
    }
  }

  get available(): boolean {
    return this.mode.kind !== "unavailable";
  }

  /**
   * Creates the container's cgroup with its limits; returns the files its process joins it by
   * (JOIN_FILE), or a problem (the container then runs without limits).
   */
  create(id: string, limits: CgroupLimits): { join: string[] } | { problem: string } {
    const mode = this.mode;
    if (mode.kind === "unavailable") return { problem: mode.reason };
    try {
      if (mode.kind === "v2") {
        const dir = join(mode.root, this.parent, id);
        mkdirSync(dir, { recursive: true });
        if (limits.memoryBytes !== undefined) {
          writeValue(dir, "memory.max", limits.memoryBytes);
          // Asked of the parent: swap accounting may be off, and then no cgroup has the file.
          if (existsSync(join(mode.root, this.parent, "memory.swap.max"))) writeValue(dir, "memory.swap.max", 0n);
        }
        if (limits.cpuLimitMillis !== undefined) writeValue(dir, "cpu.max", `${cfsQuotaUs(limits.cpuLimitMillis)} ${CFS_PERIOD_US}`);
        if (limits.cpuShares !== undefined) writeValue(dir, "cpu.weight", sharesToWeight(limits.cpuShares));
        if (limits.pidsMax !== undefined) writeValue(dir, "pids.max", limits.pidsMax);
        return { join: [join(dir, JOIN_FILE.v2)] };
      }
      const memory = join(mode.memory, this.parent, id);
      mkdirSync(memory, { recursive: true });
      if (limits.memoryBytes !== undefined) {
        writeValue(memory, "memory.limit_in_bytes", limits.memoryBytes);
        // memsw is memory plus swap: equal to the limit means no swap, as the kubelet sets it.
        if (existsSync(join(mode.memory, "memory.memsw.limit_in_bytes"))) writeValue(memory, "memory.memsw.limit_in_bytes", limits.memoryBytes);
      }
      const joinFiles = [join(memory, JOIN_FILE.v1)];
      // cpuacct is joined whatever the limits: it is how the container's CPU time is read (stats/).
      const accountedByCpu = mode.cpuacct !== undefined && mode.cpuacct === mode.cpu;
      if (mode.cpu && (accountedByCpu || limits.cpuLimitMillis !== undefined || limits.cpuShares !== undefined)) {
        const cpu = join(mode.cpu, this.parent, id);
        mkdirSync(cpu, { recursive: true });
        if (limits.cpuLimitMillis !== undefined) {
          writeValue(cpu, "cpu.cfs_period_us", CFS_PERIOD_US);
          writeValue(cpu, "cpu.cfs_quota_us", cfsQuotaUs(limits.cpuLimitMillis));
        }
        if (limits.cpuShares !== undefined) writeValue(cpu, "cpu.shares", limits.cpuShares);
        joinFiles.push(join(cpu, JOIN_FILE.v1));
      }
      if (mode.cpuacct && !accountedByCpu) {
        const cpuacct = join(mode.cpuacct, this.parent, id);
        mkdirSync(cpuacct, { recursive: true });
        joinFiles.push(join(cpuacct, JOIN_FILE.v1));
      }
      if (mode.pids && limits.pidsMax !== undefined) {
        const pids = join(mode.pids, this.parent, id);
        mkdirSync(pids, { recursive: true });
        writeValue(pids, "pids.max", limits.pidsMax);
        joinFiles.push(join(pids, JOIN_FILE.v1));
      }
      return { join: joinFiles };
    } catch (error) {
      this.remove(id);
      return { problem: `cannot write the cgroup of ${id}: ${(error as Error).message}` };
    }
  }

  /**
   * New cpu and memory values for a running container's cgroup (an in-place resize): what the
   * limits leave unset is lifted. A memory limit goes down before its swap limit and up after it,
   * as the kernel refuses a memory limit above memsw. Returns a problem, or undefined when written.
   */
  update(id: string, limits: CgroupLimits): string | undefined {
    const mode = this.mode;
    if (mode.kind === "unavailable") return mode.reason;
    try {
      if (mode.kind === "v2") {
        const dir = join(mode.root, this.parent, id);
        writeValue(dir, "memory.max", limits.memoryBytes ?? "max");
        writeValue(dir, "cpu.max", `${limits.cpuLimitMillis !== undefined ? cfsQuotaUs(limits.cpuLimitMillis) : "max"} ${CFS_PERIOD_US}`);
        writeValue(dir, "cpu.weight", sharesToWeight(limits.cpuShares ?? BigInt(milliCpuToShares(0n))));
        return undefined;
      }
      const memory = join(mode.memory, this.parent, id);
      const bytes = limits.memoryBytes ?? -1n;
      const memsw = existsSync(join(memory, "memory.memsw.limit_in_bytes"));
      const current = BigInt(readText(join(memory, "memory.limit_in_bytes")) ?? "0");
      const lowering = bytes !== -1n && bytes < current;
      if (memsw && !lowering) writeValue(memory, "memory.memsw.limit_in_bytes", bytes);
      writeValue(memory, "memory.limit_in_bytes", bytes);
      if (memsw && lowering) writeValue(memory, "memory.memsw.limit_in_bytes", bytes);
      const cpu = mode.cpu && join(mode.cpu, this.parent, id);
      if (cpu && existsSync(cpu)) {
        writeValue(cpu, "cpu.cfs_period_us", CFS_PERIOD_US);
        writeValue(cpu, "cpu.cfs_quota_us", limits.cpuLimitMillis !== undefined ? cfsQuotaUs(limits.cpuLimitMillis) : -1);
        writeValue(cpu, "cpu.shares", limits.cpuShares ?? BigInt(milliCpuToShares(0n)));
      }
      return undefined;
    } catch (error) {
      return `cannot write the cgroup of ${id}: ${(error as Error).message}`;
    }
  }

  /**
   * True once the kernel's OOM killer has killed a process of the container's cgroup. Kernels
   * before 4.13 have no `oom_kill` count in v1's memory.oom_control: there a SIGKILL (137) after the
   * cgroup hit its limit (memory.failcnt) is taken for one, as nothing else tells them apart.
   */
  oomKilled(id: string, exitCode: number): boolean {
    const mode = this.mode;
    if (mode.kind === "unavailable") return false;
    const dir = join(mode.kind === "v2" ? mode.root : mode.memory, this.parent, id);
    const counters = readText(join(dir, mode.kind === "v2" ? "memory.events" : "memory.oom_control"));
    if (counters === undefined) return false;
    const match = /^oom_kill (\d+)$/m.exec(counters);
    if (match) return Number(match[1]) > 0;
    return mode.kind === "v1" && exitCode === 137 && Number(readText(join(dir, "memory.failcnt")) ?? 0) > 0;
  }

  /**
   * Removes the container's cgroups; an already removed one is fine. A process still inside (one
   * that left the container's process group) is killed first, as a container's cgroup dies whole.
   */
  remove(id: string): void {
    for (const root of this.roots()) {
      const dir = join(root, this.parent, id);
      if (!existsSync(dir)) continue;
      for (const pid of (readText(join(dir, "cgroup.procs")) ?? "").split(/\s+/).filter(Boolean)) killQuietly(Number(pid));
      removeCgroupDir(dir);
    }
  }

  /** The container ids that have a cgroup under this agent's parent, in any hierarchy. */
  containerIds(): string[] {
    const ids = new Set<string>();
    for (const root of this.roots()) {
      try {
        for (const entry of readdirSync(join(root, this.parent), { withFileTypes: true })) if (entry.isDirectory()) ids.add(entry.name);
      } catch {
        // This hierarchy has no parent of ours.
      }
    }
    return [...ids];
  }

  /**
   * The start-up sweep of this agent's own leftovers (a cgroup whose rmdir met EBUSY, a runtime
   * root removed by hand): removes each empty container cgroup under its parent that `keep` does
   * not claim. Only this identity's parent is read, and a cgroup with a process inside is left
   * alone. `keep` must claim every container the runtime still has, exited ones included: an
   * exited container's cgroup holds the OOM counter its exit is read with. Returns the ids removed.
   */
  sweep(keep: (id: string) => boolean): string[] {
    if (this.mode.kind === "unavailable") return [];
    const removed: string[] = [];
    for (const id of this.containerIds()) {
      if (keep(id)) continue;
      const dirs = this.roots().map((root) => join(root, this.parent, id)).filter((dir) => existsSync(dir));
      if (dirs.some((dir) => (readText(join(dir, "cgroup.procs")) ?? "").trim() !== "")) continue;
      for (const dir of dirs) removeCgroupDir(dir);
      removed.push(id);
    }
    return removed;
  }

  /**
   * Removes the agent's own parent cgroup if no container cgroup is left in it (monitors outlive
   * the agent, and an exited container's cgroup keeps its OOM counter until the container is removed).
   */
  release(): void {
    for (const root of this.roots()) {
      try {
        rmdirSync(join(root, this.parent));
      } catch {
        // Still holds containers, or never made.
      }
    }
  }

  /**
   * Where the container's usage is read (cgroup-usage.ts): its memory and cpu accounting
   * directories on v1 (each absent when not made), its one directory on v2; undefined without cgroups.
   */
  usageDirs(id: string): UsageDirs | undefined {
    const mode = this.mode;
    if (mode.kind === "unavailable") return undefined;
    if (mode.kind === "v2") return { kind: "v2", dir: join(mode.root, this.parent, id) };
    const dir = (root: string | undefined) => (root && existsSync(join(root, this.parent, id)) ? join(root, this.parent, id) : undefined);
    return { kind: "v1", memory: dir(mode.memory), cpuacct: dir(mode.cpuacct) };
  }

  private roots(): string[] {
    return this.mode.kind === "v2" ? [this.mode.root] : this.v1Roots();
  }

  private v1Roots(): string[] {
    const mode = this.mode;
    if (mode.kind !== "v1") return [];
    return [...new Set([mode.memory, mode.cpu, mode.pids, mode.cpuacct])].filter((root): root is string => root !== undefined);
  }
}

function removeCgroupDir(dir: string): void {
  try {
    // A cgroup directory goes with rmdir: its files are the kernel's, not unlinkable.
    rmdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // On a fake tree (tests) the files are real ones.
    if (code === "ENOTEMPTY") rmSync(dir, { recursive: true, force: true });
    // EBUSY: a killed process is not reaped yet; the empty cgroup is left behind, for the next start's sweep.
    else if (code !== "EBUSY" && code !== "ENOENT") throw error;
  }
}

function enableControllers(dir: string): void {
  const available = readText(join(dir, "cgroup.controllers"))?.split(/\s+/) ?? [];
  const wanted = ["memory", "cpu", "pids"].filter((name) => available.includes(name));
  if (wanted.length > 0) writeFileSync(join(dir, "cgroup.subtree_control"), wanted.map((name) => `+${name}`).join(" "));
}

function writeValue(dir: string, file: string, value: bigint | number | string): void {
  writeFileSync(join(dir, file), `${value}\n`);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/** mountinfo escapes blanks and backslashes in paths as octal (`\040`). */
function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
