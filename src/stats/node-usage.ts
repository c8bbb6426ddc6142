/**
 * The node's own figures, read from /proc and statfs as cadvisor reads the root container: CPU
 * time of all cores from /proc/stat, memory from /proc/meminfo (working set = used less the
 * inactive file cache; available = capacity less the working set), the filesystem of the
 * runtime's root (the kubelet's nodefs), the process table (rlimit). Pure parsers plus one reader.
 */
import { readFileSync, statfsSync } from "node:fs";

export interface NodeReading {
  at: number;
  /** Boot time, epoch ms: when the node's cumulative counters started. */
  bootAt?: number;
  cpuUsageCoreNanoSeconds?: number;
  memory?: { usageBytes: number; workingSetBytes: number; availableBytes: number; rssBytes?: number; pageFaults?: number; majorPageFaults?: number };
  swap?: { usageBytes: number; availableBytes: number };
  fs?: FsFigures;
  /** The bytes the runtime's images take, and their filesystem when it could be read. */
  imageFs?: { usedBytes: number; fs?: FsFigures };
  rlimit?: { maxPid?: number; processes?: number };
}

export interface FsFigures {
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes: number;
  inodesFree: number;
  inodesUsed: number;
}

/** USER_HZ: /proc/stat counts in hundredths of a second on every Linux the kubelet runs on. */
const NANOS_PER_TICK = 10_000_000;

/** Busy time from /proc/stat's `cpu` line: user, nice, system, irq, softirq, steal (not idle, iowait, guest, which user already counts). */
export function parseProcStat(text: string): { cpuUsageCoreNanoSeconds?: number; bootAt?: number } {
  const result: { cpuUsageCoreNanoSeconds?: number; bootAt?: number } = {};
  for (const line of text.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] === "cpu") {
      const [user, nice, system, , , irq, softirq, steal] = fields.slice(1).map(Number);
      const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (Number.isFinite(value) ? value! : 0), 0);
      result.cpuUsageCoreNanoSeconds = busy * NANOS_PER_TICK;
    } else if (fields[0] === "btime" && fields[1]) {
      result.bootAt = Number(fields[1]) * 1000;
    }
  }
  return result;
}

/** /proc/meminfo (kB) -> the node's memory figures. */
export function parseMeminfo(text: string, vmstat?: string): NodeReading["memory"] {
  const kb: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const match = /^([^:]+):\s+(\d+)/.exec(line);
    if (match) kb[match[1]!] = Number(match[2]) * 1024;
  }
  const total = kb.MemTotal;
  const free = kb.MemFree;
  if (total === undefined || free === undefined) return undefined;
  const usageBytes = total - free;
  const workingSetBytes = Math.max(0, usageBytes - (kb["Inactive(file)"] ?? 0));
  const counters = vmstat ? Object.fromEntries(vmstat.split("\n").map((line) => line.split(" ")).filter((pair) => pair.length === 2).map(([key, value]) => [key, Number(value)])) : {};
  return {
    usageBytes,
    workingSetBytes,
    availableBytes: Math.max(0, total - workingSetBytes),
    ...(kb.AnonPages !== undefined && { rssBytes: kb.AnonPages }),
    ...(counters.pgfault !== undefined && { pageFaults: counters.pgfault }),
    ...(counters.pgmajfault !== undefined && { majorPageFaults: counters.pgmajfault }),
  };
}

/** Swap from /proc/meminfo: what is in use (total less free) and what is free. */
export function parseSwap(meminfo: string): NodeReading["swap"] {
  const total = /^SwapTotal:\s+(\d+)/m.exec(meminfo)?.[1];
  const free = /^SwapFree:\s+(\d+)/m.exec(meminfo)?.[1];
  if (total === undefined || free === undefined) return undefined;
  return { usageBytes: (Number(total) - Number(free)) * 1024, availableBytes: Number(free) * 1024 };
}

export function fsFigures(path: string): FsFigures | undefined {
  try {
    const stat = statfsSync(path);
    return {
      capacityBytes: stat.blocks * stat.bsize,
      availableBytes: stat.bavail * stat.bsize,
      usedBytes: (stat.blocks - stat.bfree) * stat.bsize,
      inodes: stat.files,
      inodesFree: stat.ffree,
      inodesUsed: stat.files - stat.ffree,
    };
  } catch {
    return undefined;
  }
}

export interface NodeFiles {
  /** Default /proc; tests point it at a fake tree. */
  proc?: string;
  /** The filesystem the node's figures describe (the runtime's root). */
  fsPath: string;
}

/** One reading of the node; a file that cannot be read leaves its figure out. */
export function readNode(files: NodeFiles, at: number): NodeReading {
  const proc = files.proc ?? "/proc";
  const reading: NodeReading = { at };
  const stat = readText(`${proc}/stat`);
  if (stat !== undefined) Object.assign(reading, parseProcStat(stat));
  const meminfo = readText(`${proc}/meminfo`);
  const memory = meminfo === undefined ? undefined : parseMeminfo(meminfo, readText(`${proc}/vmstat`));
  if (memory) reading.memory = memory;
  const swap = meminfo === undefined ? undefined : parseSwap(meminfo);
  if (swap) reading.swap = swap;
  const fs = fsFigures(files.fsPath);
  if (fs) reading.fs = fs;
  const maxPid = Number(readText(`${proc}/sys/kernel/pid_max`)?.trim());
  // loadavg's fourth field is running/total scheduling entities: the kubelet's curproc.
  const processes = Number(readText(`${proc}/loadavg`)?.split(" ")[3]?.split("/")[1]);
  const rlimit = { ...(Number.isFinite(maxPid) && maxPid > 0 && { maxPid }), ...(Number.isFinite(processes) && { processes }) };
  if (Object.keys(rlimit).length > 0) reading.rlimit = rlimit;
  return reading;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
