/**
 * The start half of a process container's start (CRI's StartContainer), after process-create.ts
 * wrote its directory: its monitor launched (process-monitor.ts), then a wait until the monitor has
 * recorded the process's pid. A monitor that cannot be launched, that dies first, or that records no
 * pid within the timeout is a ContainerStartError, with what the monitor wrote to `monitor.err`.
 */
import { join } from "node:path";
import type { ContainerLogPolicy } from "../log-rotation-policy.ts";
import type { ContainerEvents } from "./process-events.ts";
import { readPid, readText, type ProcessLayout } from "./process-files.ts";
import type { CreatedContainer } from "./process-create.ts";
import { launchMonitor, type MonitorTools } from "./process-monitor.ts";
import { ContainerStartError } from "../runtime.ts";
import { CRI_LOG_NAME } from "../container-log-file.ts";

export interface LaunchInput {
  layout: ProcessLayout;
  tools: MonitorTools;
  /** Told that the monitor is our child and when it exits; waited on for the pid. */
  events: Pick<ContainerEvents, "ownChild" | "monitorExited" | "waitFor">;
  logPolicy: ContainerLogPolicy;
  /** How long to wait for the pid. */
  startTimeoutMs: number;
  /** The container's name in its pod, for the errors. */
  name: string;
  created: CreatedContainer;
  /** The cgroup join files (cgroups.ts JOIN_FILE) the process writes itself into before it execs; none without a cgroup. */
  cgroupJoin: string[];
}

/** Launches the container's monitor and resolves once the process runs (its pid is recorded). */
export async function launchContainer(input: LaunchInput): Promise<void> {
  const { events, name, created } = input;
  const { id, dir, logDir, record } = created;
  let monitorGone = false;
  events.ownChild(id);
  try {
    launchMonitor({
      layout: input.layout,
      tools: input.tools,
      id,
      containerDir: dir,
      logPath: join(logDir, CRI_LOG_NAME),
      workingDir: record.workingDir,
      env: record.env,
      argv: record.command,
      logPolicy: input.logPolicy,
      cgroupJoin: input.cgroupJoin,
      stdio: created.stdio,
      binds: record.binds ?? [],
      readOnlyRoot: record.readOnlyRoot === true,
      hostname: record.hostname,
      identity: record.identity ?? {},
      onExit: () => {
        monitorGone = true;
        events.monitorExited(id);
      },
    });
  } catch (cause) {
    throw new ContainerStartError(name, `container ${name}: monitor failed to start`, "StartError", {
      cause,
    });
  }
  const started = await events.waitFor(id, () => readPid(dir) !== undefined || monitorGone, input.startTimeoutMs);
  if (!started || readPid(dir) === undefined) {
    const detail = (readText(join(dir, "monitor.err")) ?? "").trim() || `no pid recorded within ${input.startTimeoutMs}ms`;
    throw new ContainerStartError(name, `container ${name}: monitor did not start the process: ${detail}`);
  }
}
