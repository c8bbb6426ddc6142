/**
 * The container monitor, minikubelet's conmon: one small compiled process per container attempt
 * (monitor/minikubelet-monitor.c; where the binary comes from: monitor-binary.ts). It forks the
 * container's process into a session of its own (into its cgroups before the exec), records its pid,
 * writes its stdout and stderr as the kubelet's CRI log (per-line times, the streams apart, rotated
 * by the kubelet's size and file count), waits for it, kills what is left of its process group
 * when it ends, and records the exit. It runs in its own session with its stdio on /dev/null, so it
 * outlives the agent; a restarted agent re-attaches through the files it writes (process-files.ts)
 * and the markers it drops into the events directory.
 *
 * Containers started by the /bin/sh monitor of earlier versions (`monitor.sh`, a raw `log`) write
 * the same pid/exit files and markers: they are adopted and read as before until they end.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { ContainerLogPolicy } from "../log-rotation-policy.ts";
import type { ProcessLayout } from "./process-files.ts";
import { join } from "node:path";
import { MONITOR_NAME } from "./monitor-binary.ts";
import { ATTACH_SOCKET_NAME } from "./process-attach.ts";
import { bindArgs, type BindMount } from "./process-mounts.ts";
import { identityArgs, type ProcessIdentity } from "./process-security.ts";

/** What the monitor is run with, resolved once when the runtime starts. */
export interface MonitorTools {
  /** This version's monitor binary, under the runtime root. */
  monitor: string;
  /** Rotated logs are compressed with it; undefined without gzip on the host (they stay plain). */
  gzip: string | undefined;
  /**
   * A program the monitor is started through, with the monitor's argv as its arguments (tests hold
   * a monitor back this way). Undefined: the monitor itself.
   */
  launcher?: string;
}

/** How long the monitor goes on reading a container's output after its main process ended. */
const DRAIN_MS = 2000;

export function findGzip(): string | undefined {
  return Bun.which("gzip") ?? ["/usr/bin/gzip", "/bin/gzip"].find((path) => existsSync(path));
}

export interface MonitorLaunch {
  layout: ProcessLayout;
  tools: MonitorTools;
  id: string;
  containerDir: string;
  /** The CRI log file the monitor writes (container-log-file.ts names it). */
  logPath: string;
  workingDir: string;
  env: Record<string, string>;
  argv: string[];
  logPolicy: ContainerLogPolicy;
  /** The cgroup join files (cgroups.ts JOIN_FILE) the container's process writes itself into before it execs (none: no cgroup). */
  cgroupJoin: string[];
  /** Volumes bound at their mountPath in the container's own mount namespace. */
  binds: BindMount[];
  /** The root read-only in that namespace. */
  readOnlyRoot: boolean;
  /** The hostname of a UTS namespace of its own; undefined: the host's. */
  hostname: string | undefined;
  /** Who the process runs as. */
  identity: ProcessIdentity;
  /** The spec's stdin, stdinOnce and tty: the monitor then holds the stdin or terminal behind an attach socket. */
  stdio: { stdin: boolean; stdinOnce: boolean; tty: boolean };
  /** Called when the monitor (our child until the agent goes) exits. */
  onExit: () => void;
}

/** The monitor's command line (monitor/minikubelet-monitor.c's usage). */
export function monitorArgv(launch: MonitorLaunch): string[] {
  const { tools } = launch;
  return [
    ...(tools.launcher ? [tools.launcher] : []),
    tools.monitor,
    "--dir",
    launch.containerDir,
    "--events",
    launch.layout.eventsDir,
    "--id",
    launch.id,
    "--log",
    launch.logPath,
    "--log-max-bytes",
    String(launch.logPolicy.maxBytes),
    "--log-max-files",
    String(launch.logPolicy.maxFiles),
    ...(tools.gzip ? ["--gzip", tools.gzip] : []),
    ...launch.cgroupJoin.flatMap((file) => ["--cgroup-join", file]),
    ...attachArgs(launch),
    ...bindArgs(launch.binds),
    ...(launch.readOnlyRoot ? ["--read-only-root"] : []),
    ...(launch.hostname !== undefined ? ["--hostname", launch.hostname] : []),
    ...identityArgs(launch.identity),
    "--drain-ms",
    String(DRAIN_MS),
    "--",
    ...launch.argv,
  ];
}

/**
 * `argv` run as an exec in the container whose process is `pid`: the monitor binary's --enter mode
 * joins its namespaces, changes to `cwd` as the container sees it, and takes its identity, as a
 * runtime's exec runs with the container's process spec.
 */
export function enterArgv(monitor: string, pid: number, cwd: string, identity: ProcessIdentity, argv: string[]): string[] {
  return [monitor, "--enter", String(pid), "--wd", cwd, ...identityArgs(identity), "--", ...argv];
}

/** The stdin and terminal the monitor holds, and the socket `kubectl attach` reaches them by (process-attach.ts). */
function attachArgs({ stdio, containerDir }: MonitorLaunch): string[] {
  if (!stdio.stdin && !stdio.tty) return [];
  return [
    ...(stdio.stdin ? ["--stdin"] : []),
    ...(stdio.stdin && stdio.stdinOnce ? ["--stdin-once"] : []),
    ...(stdio.tty ? ["--tty"] : []),
    "--attach-socket",
    join(containerDir, ATTACH_SOCKET_NAME),
  ];
}

/** Starts a detached monitor for one container attempt; returns the monitor's pid. */
export function launchMonitor(launch: MonitorLaunch): number {
  const child = Bun.spawn(monitorArgv(launch), {
    cwd: launch.workingDir,
    env: launch.env,
    // setsid(): its own session, so neither a terminal's Ctrl-C nor the agent's exit reaches it.
    detached: true,
    stdio: ["ignore", "ignore", "ignore"],
    onExit: () => launch.onExit(),
  });
  // The agent may exit while monitors run; they must not keep it alive.
  child.unref();
  return child.pid;
}

/** A monitor's argv names one of these: this version's binary, or an earlier version's script. */
function isMonitorArg(arg: string): boolean {
  const name = arg.slice(arg.lastIndexOf("/") + 1);
  return name.startsWith(`${MONITOR_NAME}-`) || name === "monitor.sh";
}

/**
 * The live monitor processes of a container: those whose arguments name its directory and a
 * monitor (this version's or the shell monitor of an earlier one, and, until it execs the
 * container's command, the shell's starter). Only asked for a container with no pid recorded yet,
 * so the scan of /proc is rare.
 */
export function monitorsOf(containerDir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (args.includes(containerDir) && args.some(isMonitorArg)) found.push(Number(entry));
  }
  return found;
}
