/**
 * One agent per database: a lock file next to it (`state.db.lock`) that the agent holds an flock(2)
 * on for its whole life, with its pid and kernel start time written in it for the messages and
 * `agentLockHolder`. The kernel drops an flock when its holder dies (kill -9 included), so a crash
 * never blocks the next start, and two agents can never both hold it: there is no stale file to
 * judge and take over, which is where two agents that both found the same stale lock both won.
 */
import { dlopen } from "bun:ffi";
import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "./sync-fs.ts";
import { AgentLockError, StoreError } from "./errors.ts";

export interface AgentLock {
  readonly lockFile: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

const LOCK_EX = 2;
const LOCK_NB = 4;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

let libc: { flock(fd: number, operation: number): number; fcntl(fd: number, command: number, arg: number): number } | undefined;
function kernel(): NonNullable<typeof libc> {
  libc ??= dlopen("libc.so.6", {
    flock: { args: ["i32", "i32"], returns: "i32" },
    fcntl: { args: ["i32", "i32", "i32"], returns: "i32" },
  }).symbols as unknown as NonNullable<typeof libc>;
  return libc;
}

/** Takes the agent lock for `dbPath`, or throws AgentLockError naming the live holder's pid. */
export function acquireAgentLock(dbPath: string, pid = process.pid): AgentLock {
  const lockFile = `${dbPath}.lock`;
  for (;;) {
    const fd = openLockFile(dbPath, lockFile);
    // Not inherited: a container monitor the agent starts outlives it and would hold the lock on.
    kernel().fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (kernel().flock(fd, LOCK_EX | LOCK_NB) !== 0) {
      closeSync(fd);
      throw new AgentLockError(dbPath, readHolder(lockFile)?.pid ?? 0, lockFile);
    }
    // A holder that released (and so unlinked) the file between our open and our flock left us
    // locking a name nobody else will open: lock the file that is there now instead.
    if (!sameFile(fd, lockFile)) {
      closeSync(fd);
      continue;
    }
    ftruncateSync(fd, 0);
    writeSync(fd, `${pid} ${processStartTicks(pid) ?? "-"}\n`, 0);
    let released = false;
    return {
      lockFile,
      release() {
        if (released) return;
        released = true;
        // Unlinked while still held, so no one can lock the old file after it is gone.
        if (sameFile(fd, lockFile)) unlinkQuietly(lockFile);
        closeSync(fd);
      },
    };
  }
}

function openLockFile(dbPath: string, lockFile: string): number {
  try {
    return openSync(lockFile, "a+", 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EISDIR") throw new StoreError(dbPath, `the agent lock ${lockFile} is a directory, not a file: remove it or use another --db`);
    throw new StoreError(dbPath, `the agent lock ${lockFile} cannot be opened: ${(error as Error).message}`);
  }
}

function sameFile(fd: number, path: string): boolean {
  try {
    const held = fstatSync(fd);
    const named = statSync(path);
    return held.ino === named.ino && held.dev === named.dev;
  } catch {
    return false;
  }
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
