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
import type { ContainerLogPolicy } from "./log-rotation-policy.ts";
import type { ProcessLayout } from "./process-files.ts";
import { writeAtomic } from "./process-files.ts";

/**
 * `monitor.sh monitor DIR EVENTS ID SETSID DATE MV LOGSPEC CGROUPS -- COMMAND [ARGS...]`, with the
 * container's working directory and environment, is the monitor. It forks the container's process
 * and waits for it in the foreground, so `$?` is the exit status (128+n for a signal, as runtimes
 * report) and the container does not inherit the SIGINT/SIGQUIT ignoring a shell gives background
 * jobs. The forked subshell, as the container's own pid (read from /proc/self/stat: `$$` is the
 * monitor's), joins the container's cgroups, records `pid`, drops the `started` marker and execs
 * SETSID COMMAND: its own session, same pid. Nothing the command allocates escapes its limits, and
 * no process is spent between the monitor and the command (each costs milliseconds of the restart,
 * bench/restart-latency.ts). Until setsid has run, the recorded pid has no group of its own: a kill
 * then goes to the process itself (ProcessRuntime.killContainer). When the main process ends, the
 * rest of its process group is killed, as a container's pid namespace dies with its init. Once the
 * log writer has drained the output, it writes `exit` and the marker, so a reader that sees the
 * exit has every line. CGROUPS is the `cgroup.procs` files to write the pid to, joined by `:` (`-`
 * for none); the monitor itself and the log writer stay outside, so the container's memory is its own.
 * `pid` and `exit` are new files written by one short write each: a reader sees all of one or too
 * little to parse, never a wrong value, and needs no rename (another process, milliseconds again).
 * For the same reason no `date` is run: the start and finish times are the kernel's mtimes of `pid`
 * and `.ended`, written the moment the process started and ended (the `-` in their time fields).
 * The `start` role (`monitor.sh start DIR EVENTS ID "MONPID MONTICKS" ...`) is what monitors of
 * earlier versions run their container with, through this file: it stays for them.
 *
 * The log writer (the kubelet's runtime shim, in a few lines): the container's stdout and stderr go
 * to a pipe, and `head -c MAX` copies exactly MAX bytes of it into `log` (GNU head never reads past
 * its count, so nothing is consumed that it does not write; stdbuf -o0 makes it write each read at
 * once instead of holding up to 4 KiB in stdio's buffer). When `log` is full the writer rotates
 * it between two copies, which is the kubelet's ReopenContainerLog without a signal or a race:
 * rotated files beyond MAXFILES-2 are removed (oldest first), the rest compressed, and `log` is
 * hard-linked to `log.TIMESTAMP` and replaced by an empty file in one rename, so a reader always
 * finds a `log`. The kubelet's TIMESTAMP is to the second (it rotates every 10 s at most); ours
 * carries nanoseconds since a flood rotates as often as the size is reached. A full pipe holds the
 * container back while a rotation runs, as a slow shim does: no line is dropped.
 * Unless the log cannot be written (its disk is full): head then fails, and the writer drops the
 * output one read at a time (`dd count=1`, which returns whatever the pipe holds, so a quiet
 * container is not waited on) instead of holding the container or leaving it to SIGPIPE, as
 * containerd's log writer goes on draining after a failed write. Before each read it tries one line
 * saying how much was lost: the first that lands means there is room again, and the writer goes on
 * as before. A rotation that cannot be made (no room for the link or the new file) is undone and
 * taken the same way. The writer never exits before its input ends.
 * A process that left the container's group (setsid) may hold the pipe open after the main process
 * ends, as no pid namespace kills it here: the writer then never sees the end of its input. So a
 * watchdog gives the writer DRAIN_SECONDS to drain after the main process ended, then ends it
 * (USR1 to the monitor's own group, which the monitor alone catches), and the exit is recorded.
 * The watchdog is a new `sh -c` naming no directory, so it is not taken for a monitor or the
 * container's; the monitor stops it (and its sleep) as soon as the writer is done.
 * LOGSPEC is "MAXBYTES MAXFILES STDBUF HEAD WC LN RM GZIP SLEEP DD" (GZIP `-` when there is none).
 * Variable names carry a `__mk_` prefix because every variable the container's env defines is
 * exported here too: plain names like `dir` would leak into, or be overwritten from, its env.
 * Tools are absolute paths resolved by the agent, because the container's PATH may not hold them.
 */
/** How long the log writer may keep draining after the container's main process ended. */
const DRAIN_SECONDS = 2;

export const MONITOR_SCRIPT = `# minikubelet container monitor (generated; replaced by rename, never edited in place)
set -f
__mk_role=$1 __mk_dir=$2 __mk_events=$3 __mk_id=$4 __mk_x=$5 __mk_date=$6 __mk_mv=$7 __mk_logspec=$8 __mk_cgroups=$9
shift 9
[ "$1" = -- ] && shift
__mk_write() {
  printf '%s\\n' "$2" >"$__mk_dir/.$1.tmp" && "$__mk_mv" -f "$__mk_dir/.$1.tmp" "$__mk_dir/$1"
}
__mk_ticks() {
  __mk_t=0
  IFS= read -r __mk_stat 2>/dev/null <"/proc/$1/stat" || return 1
  __mk_p=\${__mk_stat%% *}
  __mk_stat=\${__mk_stat##*) }
  set -- $__mk_stat
  shift 19
  __mk_t=$1
}
__mk_rotate() {
  set +f
  set -- "$__mk_log".*
  set -f
  [ -e "$1" ] || set --
  __mk_n=$(($# - __mk_files + 2))
  while [ "$__mk_n" -gt 0 ]; do "$__mk_rm" -f "$1"; shift; __mk_n=$((__mk_n - 1)); done
  if [ "$__mk_gzip" != - ]; then
    for __mk_f do case $__mk_f in *.gz) ;; *) "$__mk_gzip" -f "$__mk_f" ;; esac; done
  fi
  __mk_ts=$("$__mk_date" -u +%Y%m%d-%H%M%S.%N)
  "$__mk_ln" -f "$__mk_log" "$__mk_log.$__mk_ts" 2>/dev/null || return 1
  if : 2>/dev/null >"$__mk_dir/.log.new" && "$__mk_mv" -f "$__mk_dir/.log.new" "$__mk_log" 2>/dev/null; then return 0; fi
  "$__mk_rm" -f "$__mk_log.$__mk_ts" "$__mk_dir/.log.new"
  return 1
}
__mk_drop() {
  __mk_lost=0 __mk_sep=
  # A write cut short leaves a partial line: the marker then starts a line of its own.
  __mk_end=$("$__mk_wc" -c <"$__mk_log") || __mk_end=0
  [ "$__mk_end" -gt 0 ] && [ -n "$("$__mk_dd" if="$__mk_log" bs=1 skip=$((__mk_end - 1)) count=1 2>/dev/null)" ] && __mk_sep='\\n'
  while :; do
    [ "$__mk_lost" -gt 0 ] && printf '%b[minikubelet] container output dropped: the log could not be written (no space left on device?); at least %s bytes lost\\n' "$__mk_sep" "$__mk_lost" 2>/dev/null >>"$__mk_log" && return 0
    __mk_n=$("$__mk_dd" bs=65536 count=1 2>/dev/null | "$__mk_wc" -c) || __mk_n=0
    [ "$__mk_n" -gt 0 ] || return 1
    __mk_lost=$((__mk_lost + __mk_n))
  done
}
__mk_logwriter() {
  # The writer's own files (rotations, .log.new) are 0600 like log; the container keeps its umask.
  umask 077
  __mk_max=$1 __mk_files=$2 __mk_stdbuf=$3 __mk_head=$4 __mk_wc=$5 __mk_ln=$6 __mk_rm=$7 __mk_gzip=$8 __mk_dd=\${10}
  __mk_log=$__mk_dir/log
  __mk_size=0
  while :; do
    if [ "$__mk_size" -ge "$__mk_max" ]; then
      if __mk_rotate; then __mk_size=0; else __mk_drop || return 0; __mk_size=$("$__mk_wc" -c <"$__mk_log") || __mk_size=0; continue; fi
    fi
    if "$__mk_stdbuf" -o0 "$__mk_head" -c $((__mk_max - __mk_size)) 2>/dev/null >>"$__mk_log"; then
      __mk_size=$("$__mk_wc" -c <"$__mk_log") || __mk_size=0
      [ "$__mk_size" -ge "$__mk_max" ] || return 0
    else
      __mk_drop || return 0
      __mk_size=$("$__mk_wc" -c <"$__mk_log") || __mk_size=0
    fi
  done
}
__mk_watchdog() {
  __mk_wd_dir=$__mk_dir /bin/sh -c 'trap "kill \\$s 2>/dev/null; exit 0" TERM; "$1" ${DRAIN_SECONDS} & s=$!; wait $s
[ -e "$__mk_wd_dir/exit" ] || kill -s USR1 -- "-$2" 2>/dev/null' watchdog "$9" "$$" >/dev/null 2>&1 </dev/null &
  printf '%s\\n' "$!" >"$__mk_dir/.watchdog"
}
if [ "$__mk_role" = start ]; then
  if [ "$__mk_cgroups" != - ]; then
    __mk_ifs=$IFS IFS=:
    for __mk_f in $__mk_cgroups; do printf '%s\\n' "$$" 2>>"$__mk_dir/monitor.err" >"$__mk_f"; done
    IFS=$__mk_ifs
  fi
  __mk_ticks $$
  __mk_write pid "$$ $__mk_t $("$__mk_date" +%s%N) $__mk_x" 2>>"$__mk_dir/monitor.err"
  printf "" 2>>"$__mk_dir/monitor.err" >"$__mk_events/$__mk_id.started"
  exec "$@"
fi
exec 2>>"$__mk_dir/monitor.err"
__mk_ticks $$
__mk_monitor="$$ $__mk_t"
trap : USR1
{
  (
    __mk_ticks self
    if [ "$__mk_cgroups" != - ]; then
      __mk_ifs=$IFS IFS=:
      for __mk_f in $__mk_cgroups; do printf '%s\\n' "$__mk_p" 2>>"$__mk_dir/monitor.err" >"$__mk_f"; done
      IFS=$__mk_ifs
    fi
    printf '%s\\n' "$__mk_p $__mk_t - $__mk_monitor" 2>>"$__mk_dir/monitor.err" >"$__mk_dir/pid"
    printf "" 2>>"$__mk_dir/monitor.err" >"$__mk_events/$__mk_id.started"
    exec "$__mk_x" "$@"
  ) 2>&1 </dev/null
  __mk_code=$?
  if IFS=" " read -r __mk_pid __mk_rest 2>/dev/null <"$__mk_dir/pid"; then kill -s KILL -- "-$__mk_pid" 2>/dev/null; fi
  printf '%s\\n' "$__mk_code -" >"$__mk_dir/.ended"
  __mk_watchdog $__mk_logspec
} | __mk_logwriter $__mk_logspec
IFS= read -r __mk_ended <"$__mk_dir/.ended"
IFS= read -r __mk_wd 2>/dev/null <"$__mk_dir/.watchdog" && kill "$__mk_wd" 2>/dev/null
printf '%s\\n' "$__mk_ended" >"$__mk_dir/exit"
printf "" >"$__mk_events/$__mk_id.exited"
`;

/** The external tools the monitor runs, resolved once on the agent's own PATH. */
export interface MonitorTools {
  shell: string;
  setsid: string;
  date: string;
  mv: string;
  stdbuf: string;
  head: string;
  wc: string;
  ln: string;
  rm: string;
  sleep: string;
  /** One read of the output at a time, while it is dropped (a full disk). */
  dd: string;
  /** Undefined without gzip on the host: rotated logs are then kept uncompressed. */
  gzip: string | undefined;
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
    stdbuf: find("stdbuf", ["/usr/bin/stdbuf", "/bin/stdbuf"]),
    head: find("head", ["/usr/bin/head", "/bin/head"]),
    wc: find("wc", ["/usr/bin/wc", "/bin/wc"]),
    ln: find("ln", ["/usr/bin/ln", "/bin/ln"]),
    rm: find("rm", ["/usr/bin/rm", "/bin/rm"]),
    sleep: find("sleep", ["/usr/bin/sleep", "/bin/sleep"]),
    dd: find("dd", ["/usr/bin/dd", "/bin/dd"]),
    gzip: Bun.which("gzip") ?? ["/usr/bin/gzip", "/bin/gzip"].find((path) => existsSync(path)),
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
  logPolicy: ContainerLogPolicy;
  /** The `cgroup.procs` files the container's process joins before it execs (none: no cgroup). */
  cgroupProcs: string[];
  /** Called when the monitor (our child until the agent goes) exits. */
  onExit: () => void;
}

/** The monitor's LOGSPEC argument: one word per field, so the tools' paths must hold no blank. */
function logSpec(policy: ContainerLogPolicy, tools: MonitorTools): string {
  const fields = [String(policy.maxBytes), String(policy.maxFiles), tools.stdbuf, tools.head, tools.wc, tools.ln, tools.rm, tools.gzip ?? "-", tools.sleep, tools.dd];
  const blank = fields.find((field) => /\s/.test(field));
  if (blank !== undefined) throw new Error(`process runtime: the monitor cannot use ${JSON.stringify(blank)} (a path with a blank)`);
  return fields.join(" ");
}

/** The monitor's CGROUPS argument: the files joined by `:`, so none may hold one. */
function cgroupsArg(procs: string[]): string {
  const bad = procs.find((file) => file.includes(":") || file.length === 0);
  if (bad !== undefined) throw new Error(`process runtime: the monitor cannot use the cgroup file ${JSON.stringify(bad)}`);
  return procs.length === 0 ? "-" : procs.join(":");
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
      logSpec(launch.logPolicy, tools),
      cgroupsArg(launch.cgroupProcs),
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
