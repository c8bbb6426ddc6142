/**
 * A docker container's usage from the engine: its stats API read once (`one-shot`, so the engine
 * does not wait a second for a second sample: the rate is the stats collector's job) and an inspect
 * with `size` for the writable layer and the log file. Memory counts as cadvisor counts it: the
 * engine's usage less the inactive file cache (cgroup v1's `total_inactive_file`, v2's `inactive_file`).
 */
import { statSync } from "node:fs";
import type Dockerode from "dockerode";
import { isConflict, isNotFound } from "./docker-errors.ts";
import type { ContainerUsage } from "../runtime.ts";

interface EngineStats {
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; stats?: Record<string, number> };
}

/** Undefined for a container that is gone or not running. */
export async function dockerContainerUsage(docker: Dockerode, id: string, at: () => number): Promise<ContainerUsage | undefined> {
  const container = docker.getContainer(id);
  let info: Dockerode.ContainerInspectInfo & { SizeRw?: number };
  let stats: EngineStats;
  try {
    // dockerode passes the options on as the query (`?size=1`); its types do not list `size`.
    info = await container.inspect({ size: true } as Dockerode.ContainerInspectOptions);
    if (!info.State.Running) return undefined;
    stats = (await container.stats({ stream: false, "one-shot": true })) as unknown as EngineStats;
  } catch (error) {
    // 404: removed; 409: stopped between the inspect and the stats.
    if (isNotFound(error) || isConflict(error)) return undefined;
    throw error;
  }
  const usage: ContainerUsage = { at: at() };
  const cpu = stats.cpu_stats?.cpu_usage?.total_usage;
  if (cpu !== undefined) usage.cpuUsageCoreNanoSeconds = cpu;
  const memory = stats.memory_stats;
  if (memory?.usage !== undefined) {
    const figures = memory.stats ?? {};
    const inactiveFile = figures.total_inactive_file ?? figures.inactive_file ?? 0;
    const rss = figures.total_rss ?? figures.anon;
    const faults = figures.total_pgfault ?? figures.pgfault;
    const majorFaults = figures.total_pgmajfault ?? figures.pgmajfault;
    const limit = info.HostConfig.Memory;
    usage.memory = {
      usageBytes: memory.usage,
      workingSetBytes: Math.max(0, memory.usage - inactiveFile),
      ...(rss !== undefined && { rssBytes: rss }),
      ...(limit ? { limitBytes: limit } : {}),
      ...(faults !== undefined && { pageFaults: faults }),
      ...(majorFaults !== undefined && { majorPageFaults: majorFaults }),
    };
  }
  if (info.SizeRw !== undefined) usage.rootfsUsedBytes = info.SizeRw;
  const logs = info.LogPath ? fileSize(info.LogPath) : undefined;
  if (logs !== undefined) usage.logsUsedBytes = logs;
  return usage;
}

/** The engine's log file is root's: an agent that cannot read it reports no log figure. */
function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}
