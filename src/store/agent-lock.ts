/**
 * One agent per database: a lock file next to it (`state.db.lock`) that the agent holds an flock(2)
 * on for its whole life, with its pid and kernel start time written in it for the messages and
 * `agentLockHolder`. The kernel drops an flock when its holder dies (kill -9 included), so a crash
 * never blocks the next start, and two agents can never both hold it: there is no stale file to
 * judge and take over, which is where two agents that both found the same stale lock both won.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "./sync-fs.ts";
import { AgentLockError, StoreError } from "./errors.ts";
import { isLiveProcess, parseStartTicks, recordedStartTicks } from "../host/process-liveness.ts";
import { LibcUnavailableError, openLibc } from "../host/libc.ts";

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
function kernel(lockFile: string): NonNullable<typeof libc> {
  try {
    libc ??= openLibc({
      flock: { args: ["i32", "i32"], returns: "i32" },
      fcntl: { args: ["i32", "i32", "i32"], returns: "i32" },
    }) as unknown as NonNullable<typeof libc>;
    return libc;
  } catch (error) {
    if (!(error instanceof LibcUnavailableError)) throw error;
    throw new StoreError(lockFile, `the agent lock needs flock(2) from the C library, which could not be loaded (${error.failures.join("; ")})`);
  }
}

/** Takes the agent lock for `dbPath`, or throws AgentLockError naming the live holder's pid. */
export function acquireAgentLock(dbPath: string, pid = process.pid): AgentLock {
  const lockFile = `${dbPath}.lock`;
  for (;;) {
    const fd = openLockFile(dbPath, lockFile);
    // Not inherited: a container monitor the agent starts outlives it and would hold the lock on.
    kernel(lockFile).fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (kernel(lockFile).flock(fd, LOCK_EX | LOCK_NB) !== 0) {
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
    writeSync(fd, `${pid} ${recordedStartTicks(pid)}\n`, 0);
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
  return holder && isLiveProcess(holder.pid, holder.startTicks) ? holder.pid : undefined;
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
  return { pid, startTicks: parseStartTicks(ticks) };
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
