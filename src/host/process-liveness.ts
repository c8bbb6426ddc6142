/**
 * Whether a recorded process still runs: its pid alone can be reused, so the kernel start time
 * (/proc/<pid>/stat field 22) recorded with it tells the same process from a newcomer. Linux only;
 * elsewhere a live pid counts as the same process.
 */
import fs = require("node:fs");

/** True while `pid` runs (a zombie does not: a kill -9'd process stays one until reaped) and, given `startTicks`, is the same process. */
export function isLiveProcess(pid: number, startTicks: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const state = statFields(pid)?.[0];
  if (state === "Z" || state === "X") return false;
  if (startTicks === undefined) return true;
  const now = processStartTicks(pid);
  return now === undefined || now === startTicks;
}

/** /proc/<pid>/stat field 22, or undefined off Linux or when there is no such process. */
export function processStartTicks(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** /proc/<pid>/stat from field 3 on: the command name (field 2) may hold spaces and parentheses, so counted from the last ")". */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}
