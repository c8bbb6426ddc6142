/**
 * A container's usage read from its cgroup files, as cadvisor reads them: CPU from v1's
 * `cpuacct.usage` or v2's `cpu.stat` (`usage_usec`), memory from `memory.usage_in_bytes` /
 * `memory.current` and `memory.stat`. The working set is usage less the inactive file cache
 * (cadvisor's definition, the one metrics-server and eviction use). Pure over the files it is
 * given: a file that cannot be read leaves its figure out.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerUsage } from "./runtime.ts";

/** Where a container's figures are: Cgroups.usageDirs. */
export type UsageDirs = { kind: "v1"; memory?: string; cpuacct?: string } | { kind: "v2"; dir: string };

/** v1 reports "no limit" as a huge page-rounded number; anything this large is no limit. */
const UNLIMITED_V1 = 2 ** 62;

export function readCgroupUsage(dirs: UsageDirs, at: number): Omit<ContainerUsage, "logsUsedBytes" | "rootfsUsedBytes"> {
  const usage: Omit<ContainerUsage, "logsUsedBytes" | "rootfsUsedBytes"> = { at };
  if (dirs.kind === "v2") {
    const cpu = statFile(join(dirs.dir, "cpu.stat"));
    if (cpu.usage_usec !== undefined) usage.cpuUsageCoreNanoSeconds = cpu.usage_usec * 1000;
    const current = numberFile(join(dirs.dir, "memory.current"));
    if (current !== undefined) {
      const stat = statFile(join(dirs.dir, "memory.stat"));
      const max = readText(join(dirs.dir, "memory.max"))?.trim();
      usage.memory = memoryFigures(current, stat.inactive_file, stat.anon, max && max !== "max" ? Number(max) : undefined, stat.pgfault, stat.pgmajfault);
    }
    return usage;
  }
  if (dirs.cpuacct) {
    const nanos = numberFile(join(dirs.cpuacct, "cpuacct.usage"));
    if (nanos !== undefined) usage.cpuUsageCoreNanoSeconds = nanos;
  }
  if (dirs.memory) {
    const current = numberFile(join(dirs.memory, "memory.usage_in_bytes"));
    if (current !== undefined) {
      const stat = statFile(join(dirs.memory, "memory.stat"));
      const limit = numberFile(join(dirs.memory, "memory.limit_in_bytes"));
      usage.memory = memoryFigures(current, stat.total_inactive_file, stat.total_rss, limit !== undefined && limit < UNLIMITED_V1 ? limit : undefined, stat.total_pgfault, stat.total_pgmajfault);
    }
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

function statFile(file: string): Record<string, number | undefined> {
  const text = readText(file);
  return text === undefined ? {} : parseStatLines(text);
}

function numberFile(file: string): number | undefined {
  const text = readText(file)?.trim();
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
