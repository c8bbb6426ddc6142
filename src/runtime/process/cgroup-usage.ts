/**
 * A container's usage read from its cgroup files, as cadvisor reads them: CPU from v1's
 * `cpuacct.usage` or v2's `cpu.stat` (`usage_usec`), memory from `memory.usage_in_bytes` /
 * `memory.current` and `memory.stat`. The working set is usage less the inactive file cache
 * (cadvisor's definition, the one metrics-server and eviction use). A file that cannot be read
 * leaves its figure out. Read asynchronously: a round over many containers never holds the thread.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ContainerUsage } from "../runtime.ts";

/** Where a container's figures are: Cgroups.usageDirs. */
export type UsageDirs = { kind: "v1"; memory?: string; cpuacct?: string } | { kind: "v2"; dir: string };

/** v1 reports "no limit" as a huge page-rounded number; anything this large is no limit. */
const UNLIMITED_V1 = 2 ** 62;

export async function readCgroupUsage(dirs: UsageDirs, at: number): Promise<Omit<ContainerUsage, "logsUsedBytes" | "rootfsUsedBytes">> {
  const usage: Omit<ContainerUsage, "logsUsedBytes" | "rootfsUsedBytes"> = { at };
  if (dirs.kind === "v2") {
    const [cpu, current, stat, maxText, swap, swapMax] = await Promise.all([
      statFile(join(dirs.dir, "cpu.stat")),
      numberFile(join(dirs.dir, "memory.current")),
      statFile(join(dirs.dir, "memory.stat")),
      readText(join(dirs.dir, "memory.max")),
      numberFile(join(dirs.dir, "memory.swap.current")),
      numberFile(join(dirs.dir, "memory.swap.max")),
    ]);
    if (swap !== undefined) usage.swap = { usageBytes: swap, ...(swapMax !== undefined && { availableBytes: Math.max(0, swapMax - swap) }) };
    if (cpu.usage_usec !== undefined) usage.cpuUsageCoreNanoSeconds = cpu.usage_usec * 1000;
    if (current !== undefined) {
      const max = maxText?.trim();
      usage.memory = memoryFigures(current, stat.inactive_file, stat.anon, max && max !== "max" ? Number(max) : undefined, stat.pgfault, stat.pgmajfault);
    }
    return usage;
  }
  const memory = dirs.memory;
  const [nanos, current, stat, limit, memsw, memswLimit] = await Promise.all([
    dirs.cpuacct ? numberFile(join(dirs.cpuacct, "cpuacct.usage")) : undefined,
    memory ? numberFile(join(memory, "memory.usage_in_bytes")) : undefined,
    memory ? statFile(join(memory, "memory.stat")) : ({} as Record<string, number | undefined>),
    memory ? numberFile(join(memory, "memory.limit_in_bytes")) : undefined,
    memory ? numberFile(join(memory, "memory.memsw.usage_in_bytes")) : undefined,
    memory ? numberFile(join(memory, "memory.memsw.limit_in_bytes")) : undefined,
  ]);
  if (nanos !== undefined) usage.cpuUsageCoreNanoSeconds = nanos;
  // v1 counts memory and swap together (memsw, when swap accounting is on): swap is the difference.
  if (memsw !== undefined && current !== undefined) {
    const swapLimit = memswLimit !== undefined && limit !== undefined && memswLimit < UNLIMITED_V1 ? memswLimit - limit : undefined;
    const used = Math.max(0, memsw - current);
    usage.swap = { usageBytes: used, ...(swapLimit !== undefined && { availableBytes: Math.max(0, swapLimit - used) }) };
  }
  if (current !== undefined) {
    usage.memory = memoryFigures(current, stat.total_inactive_file, stat.total_rss, limit !== undefined && limit < UNLIMITED_V1 ? limit : undefined, stat.total_pgfault, stat.total_pgmajfault);
  }
  return usage;
}

function memoryFigures(usageBytes: number, inactiveFile: number | undefined, rss: number | undefined, limit: number | undefined, pageFaults: number | undefined, majorPageFaults: number | undefined): NonNullable<ContainerUsage["memory"]> {
  return {
    usageBytes,
    workingSetBytes: Math.max(0, usageBytes - (inactiveFile ?? 0)),
    ...(rss !== undefined && { rssBytes: rss }),
    ...(limit !== undefined && { limitBytes: limit }),
    ...(pageFaults !== undefined && { pageFaults }),
    ...(majorPageFaults !== undefined && { majorPageFaults }),
  };
}

/** `key value` lines (memory.stat, cpu.stat). */
export function parseStatLines(text: string): Record<string, number> {
  const values: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) values[key] = Number(value);
  }
  return values;
}

async function statFile(file: string): Promise<Record<string, number | undefined>> {
  const text = await readText(file);
  return text === undefined ? {} : parseStatLines(text);
}

async function numberFile(file: string): Promise<number | undefined> {
  const text = (await readText(file))?.trim();
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
}
