/**
 * The container monitor, minikubelet's conmon: a few lines of /bin/sh that start one container
 * process, wait for it, and record how it ended. It runs in its own session with its stdio on
 * /dev/null, so it outlives the agent; a restarted agent re-attaches through the files it writes
 * (see process-files.ts) and the markers it drops into the events directory.
 *
 * Why a shell: the agent is meant to hold a thousand containers, and a dash process costs about a
 * megabyte (bench/monitor-memory.ts measures it), where a second Bun process would cost ~14 MB.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { ProcessLayout } from "./process-files.ts";
import { writeAtomic } from "./process-files.ts";

/**
 * One script, two roles, both with the container's working directory and environment:
 * - `monitor.sh monitor DIR EVENTS ID SETSID DATE MV -- COMMAND [ARGS...]` is the monitor: it runs
 *   the `start` role under setsid in the foreground, so `$?` is the exit status (128+n for a
 *   signal, as runtimes report) and the container does not inherit the SIGINT/SIGQUIT ignoring a
 *   shell gives background jobs. When the main process ends, the rest of its process group is
 *   killed, as a container's pid namespace dies with its init. Then it writes `exit` and the marker.
 * - `monitor.sh start DIR EVENTS ID "MONPID MONTICKS" DATE MV -- COMMAND [ARGS...]` runs already in
 *   the new session, as the container's own pid: it records `pid` and then execs the command. So
 *   the pid file never names a process whose group does not exist yet (a kill then would miss).
 * Variable names carry a `__mk_` prefix because every variable the container's env defines is
 * exported here too: plain names like `dir` would leak into, or be overwritten from, its env.
 * Tools are absolute paths resolved by the agent, because the container's PATH may not hold them.
 */
export const MONITOR_SCRIPT = `# minikubelet container monitor (generated; replaced by rename, never edited in place)
set -f
__mk_role=$1 __mk_dir=$2 __mk_events=$3 __mk_id=$4 __mk_x=$5 __mk_date=$6 __mk_mv=$7
shift 7
[ "$1" = -- ] && shift
__mk_write() {
  printf '%s\\n' "$2" >"$__mk_dir/.$1.tmp" && "$__mk_mv" -f "$__mk_dir/.$1.tmp" "$__mk_dir/$1"
}
__mk_ticks() {
  __mk_t=0
  IFS= read -r __mk_stat 2>/dev/null <"/proc/$1/stat" || return 1
  __mk_stat=\${__mk_stat##*) }
  set -- $__mk_stat
  shift 19
  __mk_t=$1
}
if [ "$__mk_role" = start ]; then
  __mk_ticks $$
  __mk_write pid "$$ $__mk_t $("$__mk_date" +%s%N) $__mk_x" 2>>"$__mk_dir/monitor.err"
  printf "" 2>>"$__mk_dir/monitor.err" >"$__mk_events/$__mk_id.started"
  exec "$@"
fi
exec 2>>"$__mk_dir/monitor.err"
__mk_ticks $$
"$__mk_x" /bin/sh "$0" start "$__mk_dir" "$__mk_events" "$__mk_id" "$$ $__mk_t" "$__mk_date" "$__mk_mv" -- "$@" \\
  >>"$__mk_dir/log" 2>&1 </dev/null
__mk_code=$?
__mk_finished=$("$__mk_date" +%s%N)
if IFS=" " read -r __mk_pid __mk_rest 2>/dev/null <"$__mk_dir/pid"; then kill -s KILL -- "-$__mk_pid" 2>/dev/null; fi
__mk_write exit "$__mk_code $__mk_finished"
printf "" >"$__mk_events/$__mk_id.exited"
`;

/** The external tools the monitor runs, resolved once on the agent's own PATH. */
export interface MonitorTools {
  shell: string;
  setsid: string;
  date: string;
  mv: string;
}

export function resolveMonitorTools(): MonitorTools {
  const find = (name: string, fallbacks: string[]): string => {
    const found = Bun.which(name) ?? fallbacks.find((path) => existsSync(path));
    if (!found) throw new Error(`process runtime: '${name}' not found on PATH or in ${fallbacks.join(", ")}`);
    return found;
  };
  return {
    shell: "/bin/sh",
    setsid: find("setsid", ["/usr/bin/setsid", "/bin/setsid"]),
    date: find("date", ["/usr/bin/date", "/bin/date"]),
    mv: find("mv", ["/usr/bin/mv", "/bin/mv"]),
  };
}

/**
 * Puts the current script at layout.monitorScript. A running dash reads its script as it goes, so
 * an old file is replaced by rename (the running monitors keep the old inode), never overwritten.
 */
export function installMonitorScript(layout: ProcessLayout): void {
  const path = layout.monitorScript;
  const current = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  if (current !== MONITOR_SCRIPT) writeAtomic(path, MONITOR_SCRIPT);
}

export interface MonitorLaunch {
  layout: ProcessLayout;
  tools: MonitorTools;
  id: string;
  containerDir: string;
  workingDir: string;
  env: Record<string, string>;
  argv: string[];
  /** Called when the monitor (our child until the agent goes) exits. */
  onExit: () => void;
}

/** Starts a detached monitor for one container attempt; returns the monitor's pid. */
export function launchMonitor(launch: MonitorLaunch): number {
  const { layout, tools } = launch;
  const child = Bun.spawn(
    [
      tools.shell,
      layout.monitorScript,
      "monitor",
      launch.containerDir,
      layout.eventsDir,
      launch.id,
      tools.setsid,
      tools.date,
      tools.mv,
      "--",
      ...launch.argv,
    ],
    {
      cwd: launch.workingDir,
      env: launch.env,
      // setsid(): its own session, so neither a terminal's Ctrl-C nor the agent's exit reaches it.
      detached: true,
      stdio: ["ignore", "ignore", "ignore"],
      onExit: () => launch.onExit(),
    },
  );
  // The agent may exit while monitors run; they must not keep it alive.
  child.unref();
  return child.pid;
}

/**
 * The live monitor processes of a container: those whose arguments name its directory (both the
 * monitor and, until it execs the container's command, its starter). Only asked for a container
 * with no pid recorded yet, so the scan of /proc is rare.
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
    if (args.includes(containerDir) && args.some((arg) => arg.endsWith("monitor.sh"))) found.push(Number(entry));
  }
  return found;
}
