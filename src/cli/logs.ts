/**
 * `minikubelet logs POD [-c CONTAINER] [--previous] [-f] [--tail N]`: the output of a container's
 * current (or previous) attempt. The attempts table names each attempt's log file when the runtime
 * keeps one (the process runtime); for others a `LogReader` (e.g. docker's readLogs) is the seam.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { realClock, sleep, type Clock } from "../clock.ts";
import type { AttemptRow } from "../store/queries.ts";
import { AmbiguousPodError } from "../store/queries.ts";
import { openStoreReader } from "../store/reader.ts";
import { humanDuration } from "../status/age.ts";
import { deletionCauseText } from "./describe-pod.ts";
import { UsageError, UserError } from "./cli.ts";
import { interruptSignal } from "./events.ts";
import type { LogFollower } from "./docker-log-reader.ts";
import { podNotFound } from "./pod-not-found.ts";

export interface LogsOptions {
  db?: string;
  namespace?: unknown;
  container?: string;
  previous?: boolean;
  follow?: boolean;
  tail?: unknown;
}

/** Reads an attempt's whole output when no log file is recorded for it (docker: readLogs by runtime id). */
export type LogReader = (attempt: AttemptRow) => Promise<string>;

export interface LogsDeps {
  clock?: Clock;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  readLogs?: LogReader;
  /** `-f` for attempts without a log file (docker): streams from the runtime. */
  followLogs?: LogFollower;
  signal?: AbortSignal;
  /** `-f` poll period; default 500 ms. */
  intervalMs?: number;
}

export async function logsCommand(podName: string, options: LogsOptions, deps: LogsDeps = {}): Promise<number> {
  const { clock = realClock, stdout = (t) => process.stdout.write(t), stderr = (t) => process.stderr.write(t) } = deps;
  const tail = parseTail(options.tail);
  using reader = openStoreReader(options.db);
  let pod;
  try {
    pod = reader.store.findPod(podName, options.namespace === undefined ? undefined : String(options.namespace));
  } catch (error) {
    if (error instanceof AmbiguousPodError) throw new UserError(error.message);
    throw error;
  }
  if (!pod) throw podNotFound(reader.store, reader.path, podName, { includeDeleted: true });
  const names = [...(pod.object.spec.initContainers ?? []), ...pod.object.spec.containers].map((c) => c.name);
  let container = options.container;
  if (container === undefined) {
    container = pod.object.spec.containers[0]?.name ?? names[0]!;
    if (pod.object.spec.containers.length > 1) stderr(`Defaulted container "${container}" out of: ${names.join(", ")}\n`);
  } else if (!names.includes(container)) {
    throw new UserError(`container ${container} is not valid for pod ${podName}`);
  }
  const attempts = reader.store.attempts(pod.uid, container);
  const current = attempts.at(-1);
  // --previous is the container in lastState.terminated, as the kubelet reads it: while a container
  // waits to restart (CrashLoopBackOff) that is the latest attempt, else the one before it.
  const statuses = [...(pod.object.status?.initContainerStatuses ?? []), ...(pod.object.status?.containerStatuses ?? [])];
  const waiting = statuses.find((s) => s.name === container)?.state?.waiting !== undefined;
  const attempt = options.previous ? (waiting && current?.finishedAt != null ? current : attempts.at(-2)) : current;
  if (!attempt) {
    throw new UserError(
      options.previous
        ? `previous terminated container "${container}" in pod "${podName}" not found`
        : `container "${container}" in pod "${podName}" has not started yet`,
    );
  }
  // Removing a pod removes its containers, whose output goes with them: say that, not ENOENT.
  const deletedPodLogs = (subject: string, name: string, deletedAt: number): UserError => {
    const cause = deletionCauseText(reader.store.podRecord(pod.uid)?.deletionCause);
    return new UserError(`${subject}: pod ${name} was deleted ${humanDuration(clock.now() - deletedAt)} ago (${cause}), and its containers' logs with it`);
  };
  if (!attempt.logPath) {
    if (options.follow && !options.previous && deps.followLogs) {
      await deps.followLogs(attempt, tail, stdout, deps.signal ?? interruptSignal());
      return 0;
    }
    if (!deps.readLogs) throw new UserError(`no log file is recorded for container "${container}" attempt ${attempt.attempt} (runtime id ${attempt.runtimeId || "none"})`);
    let text: string;
    try {
      text = await deps.readLogs(attempt);
    } catch (error) {
      if (pod.deletedAt !== null) throw deletedPodLogs(`logs of container "${container}" attempt ${attempt.attempt}`, pod.name, pod.deletedAt);
      throw error;
    }
    stdout(tailLines(text, tail));
    return 0;
  }
  let offset = 0;
  try {
    const text = readFileSync(attempt.logPath, "utf8");
    stdout(tailLines(text, tail));
    offset = Buffer.byteLength(text);
  } catch (error) {
    const subject = `logs of container "${container}" attempt ${attempt.attempt}`;
    if (pod.deletedAt !== null) throw deletedPodLogs(subject, pod.name, pod.deletedAt);
    const why = attempt.attempt < (current?.attempt ?? 0) - 1 ? "; the runtime keeps only the current and previous attempt" : "";
    throw new UserError(`${subject}: cannot read ${attempt.logPath} (${(error as NodeJS.ErrnoException).code ?? error})${why}`);
  }
  if (!options.follow || options.previous) return 0;
  const signal = deps.signal ?? interruptSignal();
  while (!signal.aborted) {
    offset = copyNew(attempt.logPath, offset, stdout);
    const latest = reader.store.attempts(pod.uid, container).at(-1);
    // The attempt ended (or a new one started): print what is left and stop, like kubectl -f.
    if (!latest || latest.attempt !== attempt.attempt || latest.finishedAt !== null) {
      copyNew(attempt.logPath, offset, stdout);
      break;
    }
    try {
      await sleep(clock, deps.intervalMs ?? 500, signal);
    } catch {
      break;
    }
  }
  return 0;
}

function parseTail(value: unknown): number | undefined {
  if (value === undefined || value === "" || value === -1 || value === "-1") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--tail must be a whole number of lines (got ${JSON.stringify(value)})`);
  return n;
}

/** The last `n` lines of `text` (all of it when n is undefined). */
export function tailLines(text: string, n: number | undefined): string {
  if (n === undefined) return text;
  if (n === 0) return "";
  const lines = text.split("\n");
  const trailing = lines.at(-1) === "" ? lines.pop() : undefined;
  return lines.slice(-n).join("\n") + (trailing !== undefined ? "\n" : "");
}

function copyNew(path: string, offset: number, stdout: (text: string) => void): number {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return offset;
  }
  if (size <= offset) return offset;
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(size - offset);
    const read = readSync(fd, buffer, 0, buffer.length, offset);
    stdout(buffer.subarray(0, read).toString("utf8"));
    return offset + read;
  } finally {
    closeSync(fd);
  }
}
