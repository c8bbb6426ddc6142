/**
 * One container attempt's output, as `minikubelet logs` and the API's pods/log both serve it: from
 * the attempt's log file (the process runtime; readable without the agent, from the database's
 * runtime root) or from the engine by runtime id (docker). Applies the kubelet's options in its
 * order (since, then tail, then timestamps, then the byte limit) and, with `follow`, keeps writing
 * until the attempt ends or `signal` aborts: a followed file is read again when it changes (its
 * watch, no polling), with a slow backstop check.
 */
import { watch } from "node:fs";
import { dirname } from "node:path";
import type { Clock } from "../clock.ts";
import { isCriLogPath, type CriStream } from "../runtime/container-log-file.ts";
import { EngineUnreachableError } from "../runtime/docker/docker-errors.ts";
import type { LogOptions } from "../runtime/runtime.ts";
import type { AttemptRow, StoreReader } from "../store/queries.ts";
import { OpenLog, type LogRange } from "./log-file.ts";
import { fileOutput, type LogWriter } from "./file-output.ts";
import { attemptEnded } from "./select.ts";

export interface LogQuery {
  tailLines?: number;
  /** Stop after this many bytes (timestamps included, as the kubelet counts them). */
  limitBytes?: number;
  /** Only output written at or after this time, in ms since the epoch. */
  sinceMs?: number;
  timestamps?: boolean;
  follow?: boolean;
  /**
   * Only this stream's output (the API's `stream`, Kubernetes 1.32+); both when undefined. Only a
   * CRI log knows which stream wrote what: any other source is refused (LogStreamsUnavailableError).
   */
  stream?: CriStream;
}

/** Where output without a log file comes from: DockerRuntime.streamLogs. */
export interface EngineLogs {
  streamLogs(id: string, options: LogOptions & { follow: boolean }, onText: (text: string) => void | Promise<void>, signal: AbortSignal, opened?: () => void): Promise<void>;
}

export interface LogReadDeps {
  store: StoreReader;
  clock: Clock;
  signal: AbortSignal;
  /** The engine, for attempts without a log file; asked for only when such an attempt is read. */
  engine?: () => Promise<EngineLogs>;
  /** Called once the output's source is open: an error after it comes mid-stream. */
  opened?: () => void;
  /** The database's commits (under `run`): a followed attempt's end is noticed as it is recorded. */
  commits?: { subscribe(listener: (revision: number) => void): () => void };
  /** How often a followed log file is looked at with no sign of change; default FOLLOW_BACKSTOP_MS. */
  intervalMs?: number;
}

/**
 * A followed log file is read when it changes (its watch) or the database commits; this is the
 * check made anyway, for filesystems whose watch misses writes and, with no commit feed (the CLI
 * reads the database from outside the agent), for noticing the attempt's end.
 */
export const FOLLOW_BACKSTOP_MS = 2000;

export type { LogWriter };

/** The attempt's log file could not be read (removed with its pod, or pruned by retention). */
export class LogFileError extends Error {
  override readonly name = "LogFileError";
  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    super(`cannot read ${path} (${code})`);
  }
}

/** The engine refused or failed to give an attempt's output; `unreachable` when it gave no answer at all. */
export class EngineLogError extends Error {
  override readonly name = "EngineLogError";
  readonly unreachable: boolean;
  constructor(what: string, runtimeId: string, cause: unknown) {
    super(`${what}: docker container ${runtimeId.slice(0, 12)}: ${(cause as Error).message ?? cause}`, { cause });
    this.unreachable = cause instanceof EngineUnreachableError;
  }
}

/** One stream was asked of output that does not say which stream wrote it (a raw log, the engine's text). */
export class LogStreamsUnavailableError extends Error {
  override readonly name = "LogStreamsUnavailableError";
}

/** The attempt's output is in the engine, and no engine was given to read it from. */
export class NoEngineError extends Error {
  override readonly name = "NoEngineError";
}

export async function writeAttemptLogs(attempt: AttemptRow, query: LogQuery, deps: LogReadDeps, write: LogWriter): Promise<void> {
  if (query.stream !== undefined && !(attempt.logPath && isCriLogPath(attempt.logPath))) {
    const source = attempt.logPath ? `its log file ${attempt.logPath} holds both streams as one` : "its output is read from the engine as one text";
    throw new LogStreamsUnavailableError(`logs of container "${attempt.container}" attempt ${attempt.attempt}: stream ${query.stream} cannot be told apart: ${source}`);
  }
  const limit = new AbortController();
  const signal = AbortSignal.any([deps.signal, limit.signal]);
  const out = query.limitBytes === undefined ? write : limitedWriter(query.limitBytes, write, () => limit.abort());
  if (attempt.logPath) await writeFileLogs(attempt, attempt.logPath, query, { ...deps, signal }, out);
  else await writeEngineLogs(attempt, query, { ...deps, signal }, out);
}

function limitedWriter(limitBytes: number, write: LogWriter, reached: () => void): LogWriter {
  let left = limitBytes;
  return (bytes) => {
    if (left <= 0) return;
    const kept = bytes.length <= left ? bytes : bytes.subarray(0, left);
    left -= kept.length;
    if (left <= 0) reached();
    return write(kept);
  };
}

/**
 * The process runtime's file, served by its format (file-output.ts). A follower moves on to the new
 * file when the writer rotates the log (the kubelet's follower does the same on its rename event):
 * the old one is read to its end first, since the writer rotates only a file it has finished, so no
 * line is lost or read twice; after several rotations, through the newest rotated file (see
 * OpenLog.next).
 */
async function writeFileLogs(attempt: AttemptRow, path: string, query: LogQuery, deps: LogReadDeps, write: LogWriter): Promise<void> {
  let file = openLog(path);
  try {
    deps.opened?.();
    const output = fileOutput(path, file.writtenAt(), query, write);
    const tail = file.tail(query.tailLines);
    let range: LogRange = tail;
    if (output.skipsWritten) range = { start: tail.end, end: tail.end };
    else await readTailBefore(file, tail, output.written, deps.signal);
    let offset = await file.read(range, output.written, deps.signal);
    if (!query.follow) return await output.end();
    // Watched from before the next read on: a write between the read and the wait is not missed.
    using changes = new FollowChanges(dirname(path), deps.commits);
    while (!deps.signal.aborted) {
      // Seen ended before the last read: every byte the attempt wrote is read before stopping.
      const ended = attemptEnded(deps.store, attempt);
      const rotated = file.rotated();
      offset = await file.read({ start: offset, end: file.size() }, output.followed(deps.clock.now()), deps.signal);
      if (rotated) {
        const next = nextLog(file);
        file[Symbol.dispose]();
        file = next;
        offset = 0;
        continue;
      }
      if (ended) return;
      await changes.next(deps.clock, deps.intervalMs ?? FOLLOW_BACKSTOP_MS, deps.signal);
    }
  } finally {
    file[Symbol.dispose]();
  }
}

/** A tail that asked for more lines than the log holds since its last rotation starts in the rotated file. */
async function readTailBefore(file: OpenLog, tail: LogRange & { missing: number }, emit: LogWriter, signal: AbortSignal): Promise<void> {
  const before = tail.missing > 0 ? file.tailBefore(tail.missing, tail.end === 0) : undefined;
  if (!before) return;
  using rotated = before.file;
  await rotated.read(before.range, emit, signal);
}

function nextLog(file: OpenLog): OpenLog {
  try {
    return file.next();
  } catch (error) {
    throw new LogFileError(file.path, (error as NodeJS.ErrnoException).code ?? String(error));
  }
}

function openLog(path: string): OpenLog {
  try {
    return OpenLog.open(path);
  } catch (error) {
    throw new LogFileError(path, (error as NodeJS.ErrnoException).code ?? String(error));
  }
}

/** Tells a follower when to look again: its file changed, the database committed, or the backstop passed. */
class FollowChanges implements Disposable {
  private changed = false;
  private wake: (() => void) | undefined;
  private readonly stops: (() => void)[] = [];

  /** Watches the log's directory, not the file: after a rotation the name holds another file. */
  constructor(dir: string, commits: LogReadDeps["commits"]) {
    const notify = () => {
      this.changed = true;
      this.wake?.();
    };
    try {
      const watcher = watch(dir, notify);
      // A watch that fails (the file removed with its pod) leaves the backstop to do the work.
      watcher.on("error", () => watcher.close());
      this.stops.push(() => watcher.close());
    } catch {
      // No watch on this filesystem: the backstop alone.
    }
    if (commits) this.stops.push(commits.subscribe(notify));
  }

  /** Resolves at once when something changed since the last call, else at the next change, after `backstopMs`, or on abort. */
  next(clock: Clock, backstopMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.wake = undefined;
        this.changed = false;
        cancel();
        signal.removeEventListener("abort", done);
        resolve();
      };
      const cancel = clock.setTimeout(done, backstopMs);
      if (this.changed || signal.aborted) return done();
      this.wake = done;
      signal.addEventListener("abort", done, { once: true });
    });
  }

  [Symbol.dispose](): void {
    for (const stop of this.stops) stop();
  }
}

/** An attempt's output from the engine by its runtime id (docker attempts record no log file). */
export async function writeEngineLogs(attempt: AttemptRow, query: LogQuery, deps: Pick<LogReadDeps, "signal" | "engine" | "opened">, write: LogWriter): Promise<void> {
  const what = `logs of container "${attempt.container}" attempt ${attempt.attempt}`;
  if (!attempt.runtimeId) throw new Error(`${what}: no runtime id is recorded (the container never started)`);
  if (!deps.engine) throw new NoEngineError(`${what}: the output is kept by the container engine, and no engine is available here`);
  const engine = await deps.engine();
  const options = { tail: query.tailLines, timestamps: query.timestamps, sinceMs: query.sinceMs, follow: query.follow ?? false };
  // A writer that failed has stopped the reading through the signal.
  const onText = (text: string) => Promise.resolve(write(Buffer.from(text))).catch(() => undefined);
  try {
    await engine.streamLogs(attempt.runtimeId, options, onText, deps.signal, deps.opened);
  } catch (error) {
    throw new EngineLogError(what, attempt.runtimeId, error);
  }
}
