/**
 * Signalling and removing a process container. A removal stops everything that could still run or
 * write in the container's directories (a monitor about to start the process, the process, the
 * monitor's last writes) before the directories, its cgroup and its event markers go, so nothing is
 * left behind and nothing is started after.
 */
import { existsSync, rmSync } from "node:fs";
import type { Cgroups } from "./cgroups.ts";
import type { ContainerEvents } from "./process-events.ts";
import { killGroup } from "./process-exec.ts";
import { readExit, readPid, readPidFile, type ProcessLayout } from "./process-files.ts";
import { monitorsOf } from "./process-monitor.ts";
import { ContainerNotFoundError, type RuntimeContainerState } from "../runtime.ts";
import { signalNumber, type SignalName } from "../../manifest/signals.ts";
import { isLiveProcess } from "../../host/process-liveness.ts";

/**
 * Signals the container's process (its group once it has one); one that exited is left alone. By
 * number, since the real-time stop signals (SIGRTMIN+n) have no name the host's kill knows. A `pid`
 * file that names no process proves nothing: ContainerNotFoundError, nothing signalled.
 */
export function signalContainer(id: string, dir: string, name: SignalName): void {
  const signal = signalNumber(name);
  if (signal === undefined) throw new Error(`unknown signal ${JSON.stringify(name)}`);
  if (readExit(dir)) return;
  const file = readPidFile(dir);
  if (file.state === "unusable") throw new ContainerNotFoundError(`container ${id}: ${file.problem}: its process cannot be proven, so nothing was signalled`);
  const pid = file.state === "read" ? file.value : undefined;
  // The recorded start time guards against signalling a stranger that inherited the pid. Until
  // the process has run setsid it has no group of its own: then it is signalled alone.
  if (pid && isLiveProcess(pid.pid, pid.startTicks) && !killGroup(pid.pid, signal)) killQuietly(pid.pid, signal);
}

export interface RemovalInput {
  id: string;
  /** Its records. */
  dir: string;
  /** Its logs (the same directory for a container of an earlier version). */
  logDir: string;
  layout: ProcessLayout;
  events: Pick<ContainerEvents, "waitFor">;
  cgroups: Pick<Cgroups, "remove">;
  /** The container's state as read now (process-status.ts). */
  state: () => RuntimeContainerState;
}

/** Kills what runs in the container, waits for its monitor's last writes, then removes its cgroup, directories and markers. */
export async function removeContainerFiles(input: RemovalInput): Promise<void> {
  const { id, dir, layout, events } = input;
  // A monitor that has not recorded its pid yet may still start the process: it goes first.
  // What may still run there cannot be told from a stranger: it is left, and its directory with it.
  const file = readPidFile(dir);
  if (file.state === "unusable" && !readExit(dir)) throw new Error(`container ${id}: ${file.problem}: its process cannot be proven, so it is left running: not removed`);
  if (input.state() === "created") await killMonitors(id, dir, events);
  const pid = readPid(dir);
  if (input.state() === "running") signalContainer(id, dir, "SIGKILL");
  // Let the monitor finish its last writes (exit file, then marker) so nothing is left behind.
  if (pid && !readExit(dir)?.lost) {
    const markers = layout.markers(id, "exited");
    await events.waitFor(id, () => markers.some((marker) => existsSync(marker)) || !isLiveProcess(pid.monitorPid, pid.monitorStartTicks), 2000, 20);
  }
  input.cgroups.remove(id);
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  if (input.logDir !== dir) rmSync(input.logDir, { recursive: true, force: true, maxRetries: 3 });
  for (const marker of [...layout.markers(id, "started"), ...layout.markers(id, "exited")]) rmSync(marker, { force: true });
}

/** SIGKILLs the monitors of a container until none is left, so none can start or record anything more. */
async function killMonitors(id: string, dir: string, events: Pick<ContainerEvents, "waitFor">): Promise<void> {
  for (let pids = monitorsOf(dir); pids.length > 0; pids = monitorsOf(dir)) {
    for (const pid of pids) killQuietly(pid);
    await events.waitFor(id, () => monitorsOf(dir).length === 0, 1000, 10);
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals | number = "SIGKILL"): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}
