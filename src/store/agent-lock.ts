/**
 * One agent per database: a lock file next to it (`state.db.lock`) holding the owner's pid and its
 * kernel start time. A second agent is refused while that process lives; a lock left by a
 * `kill -9`'d agent names a dead pid (or a pid reused by another process, told apart by the start
 * time) and is taken over, so a crash never blocks the next start.
 */
import { linkSync, readFileSync, unlinkSync, writeFileSync } from "./sync-fs.ts";
import { AgentLockError } from "./errors.ts";

export interface AgentLock {
  readonly lockFile: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

/** Takes the agent lock for `dbPath`, or throws AgentLockError naming the live holder's pid. */
export function acquireAgentLock(dbPath: string, pid = process.pid): AgentLock {
  const lockFile = `${dbPath}.lock`;
  const content = `${pid} ${processStartTicks(pid) ?? "-"}\n`;
  const tmp = `${lockFile}.${pid}.tmp`;
  writeFileSync(tmp, content);
  try {
    // link() is atomic and fails if the name exists: two agents cannot both win.
    for (let tries = 0; ; tries++) {
      try {
        linkSync(tmp, lockFile);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries >= 2) throw error;
        const holder = readHolder(lockFile);
        if (holder && holder.pid !== pid && isAlive(holder.pid, holder.startTicks)) {
          throw new AgentLockError(dbPath, holder.pid, lockFile);
        }
        // Stale (or our own pid from an earlier open in this process): take it over.
        unlinkQuietly(lockFile);
      }
    }
  } finally {
    unlinkQuietly(tmp);
  }
  let released = false;
  return {
    lockFile,
    release() {
      if (released) return;
      released = true;
      if (readHolder(lockFile)?.pid === pid) unlinkQuietly(lockFile);
    },
  };
}

/** The pid holding the lock of `dbPath` if that process is alive, else undefined. */
export function agentLockHolder(dbPath: string): number | undefined {
  const holder = readHolder(`${dbPath}.lock`);
  return holder && isAlive(holder.pid, holder.startTicks) ? holder.pid : undefined;
}

function readHolder(lockFile: string): { pid: number; startTicks?: string } | undefined {
  let text: string;
  try {
    text = readFileSync(lockFile, "utf8");
  } catch {
    return undefined;
  }
  const [pidText, ticks] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, startTicks: ticks && ticks !== "-" ? ticks : undefined };
}

function isAlive(pid: number, startTicks: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // A kill -9'd agent stays a zombie until its parent reaps it: it holds nothing any more.
  const state = processState(pid);
  if (state === "Z" || state === "X") return false;
  if (startTicks === undefined) return true;
  const now = processStartTicks(pid);
  return now === undefined || now === startTicks;
}

/** /proc/<pid>/stat field 3 (R, S, D, Z ...), or undefined off Linux or when there is no such process. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** /proc/<pid>/stat field 22: tells a reused pid from the one that wrote the lock (Linux only). */
function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
