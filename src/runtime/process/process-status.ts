/**
 * A process container's status, read from the files its monitor writes (process-files.ts) and the
 * kernel's view of the recorded processes: created (no pid yet), running, or exited with its code.
 * A process that is gone while its monitor is gone too will never get an exit file: the exit is
 * then recorded as lost, here, so every later read agrees. On a full disk neither the monitor nor
 * this record can be written: the lost exit is then held in memory (every read agrees all the same,
 * and a stopped pod is not kept waiting for space) and written on a later read once there is room.
 */
import type { Clock } from "../../clock.ts";
import type { Cgroups } from "./cgroups.ts";
import { containerLogPath } from "../container-log-file.ts";
import { LOST_EXIT_CODE, readExit, readPid, writeLostExit } from "./process-files.ts";
import type { ContainerStatus } from "../runtime.ts";
import { isLiveProcess } from "../../host/process-liveness.ts";

export interface StatusSources {
  /** Tells an OOM kill from another SIGKILL. */
  cgroups: Pick<Cgroups, "oomKilled">;
  /** Stamps a lost exit. */
  clock: Clock;
  /** Lost exits the disk could not take yet, by container directory: when each was noticed. */
  unwrittenExits: Map<string, number>;
}

/** The status of container `id` whose records are in `dir` and logs in `logDir`; `unknown` when there is no directory. */
export function readContainerStatus(id: string, dirs: { dir: string; logDir: string } | undefined, sources: StatusSources): ContainerStatus {
  if (!dirs) return { id, state: "unknown" };
  const { dir } = dirs;
  const logPath = containerLogPath(dirs.logDir);
  const pid = readPid(dir);
  const exited = (): ContainerStatus | undefined => {
    const exit = readExit(dir);
    if (!exit) return undefined;
    // Asked of the kernel, not guessed from the 137 a SIGKILL also gives.
    const oomKilled = !exit.lost && exit.exitCode !== 0 && sources.cgroups.oomKilled(id, exit.exitCode);
    return {
      id,
      state: "exited",
      exitCode: exit.exitCode,
      ...(exit.lost ? { reason: "Unknown" } : oomKilled ? { reason: "OOMKilled" } : {}),
      startedAt: pid?.startedAt,
      finishedAt: exit.finishedAt,
      logPath,
    };
  };
  const done = exited();
  if (done) return done;
  if (!pid) return { id, state: "created", logPath };
  const running: ContainerStatus = { id, state: "running", pid: pid.pid, startedAt: pid.startedAt, logPath };
  if (isLiveProcess(pid.pid, pid.startTicks)) return running;
  // The process is gone. A live monitor is about to write the exit file; a dead one never will.
  if (isLiveProcess(pid.monitorPid, pid.monitorStartTicks)) return running;
  const late = exited();
  if (late) return late;
  const finishedAt = sources.unwrittenExits.get(dir) ?? sources.clock.now();
  try {
    writeLostExit(dir, finishedAt);
  } catch {
    sources.unwrittenExits.set(dir, finishedAt);
    return { id, state: "exited", exitCode: LOST_EXIT_CODE, reason: "Unknown", startedAt: pid.startedAt, finishedAt: Math.round(finishedAt), logPath };
  }
  sources.unwrittenExits.delete(dir);
  return exited() ?? { id, state: "unknown" };
}
