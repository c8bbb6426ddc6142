/**
 * Whether a recorded process still runs, the one rule every part of the agent uses (the process
 * runtime's containers and monitors, the docker node lock, the agent lock, the API's socket
 * directory): a pid alone can be reused, so the kernel start time recorded with it (/proc/<pid>/stat
 * field 22) tells the same process from a newcomer, and a zombie (a kill -9'd process not yet reaped)
 * no longer runs. Without /proc (not Linux) a pid that takes a signal counts as the same process.
 */
import fs = require("node:fs");

/**
 * True while `pid` runs, is not a zombie and, given `startTicks`, is the process that was recorded
 * with them. Undefined `startTicks` (none could be recorded) accepts any live process with the pid.
 */
export function isLiveProcess(pid: number, startTicks: string | undefined): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const fields = statFields(pid);
  if (fields === undefined) return !procMounted() && signalReaches(pid);
  const state = fields[0];
  if (state === "Z" || state === "X") return false;
  return startTicks === undefined || fields[19] === startTicks;
}

/**
 * /proc/<pid>/stat field 22 (clock ticks since boot), or undefined off Linux or when there is no
 * such process. A zombie still has its stat, so a process that exited but was not reaped has them.
 */
export function processStartTicks(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return statFields(pid)?.[19];
}

/** /proc/<pid>/stat from field 3 on: the command name (field 2) may hold spaces and parentheses, so counted from the last ") ". */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function procMounted(): boolean {
  return fs.existsSync("/proc/self/stat");
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** How a record spells start ticks it could not read (`-`), so a reader never takes it for ticks. */
const UNKNOWN_START_TICKS = "-";

/** `pid`'s start ticks as a record keeps them: the ticks, or `-` when they cannot be read. */
export function recordedStartTicks(pid: number): string {
  return processStartTicks(pid) ?? UNKNOWN_START_TICKS;
}

/** The start ticks a record holds, undefined for none or `-` (then isLiveProcess accepts any live process with the pid). */
export function parseStartTicks(text: string | undefined): string | undefined {
  return text && text !== UNKNOWN_START_TICKS ? text : undefined;
}
