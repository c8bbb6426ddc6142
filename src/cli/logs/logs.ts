/**
 * `minikubelet logs POD [-c CONTAINER] [--previous] [-f] [--tail N]`: the output of a container's
 * current (or previous) attempt, read by src/logs/ (shared with the API's pods/log). The attempts
 * table names each attempt's log file when the runtime keeps one (the process runtime); for others a
 * `LogReader` (e.g. docker's readLogs) is the seam.
 */
import { StringDecoder } from "node:string_decoder";
import { realClock, type Clock } from "../../clock.ts";
import { LogFileError, writeAttemptLogs } from "../../logs/attempt-logs.ts";
import { chooseAttempt } from "../../logs/select.ts";
import type { AttemptRow } from "../../store/queries.ts";
import { AmbiguousPodError } from "../../store/queries.ts";
import { openStoreReader } from "../../store/reader.ts";
import { humanDuration } from "../../printers/age.ts";
import type { V1PodSpec } from "../../v1/v1.ts";
import { deletionCauseText } from "../describe/describe-pod.ts";
import { UsageError, UserError } from "../errors.ts";
import { interruptSignal } from "../events/events.ts";
import { podNotFound } from "../pod-not-found.ts";

export interface LogsOptions {
  db?: string;
  namespace?: unknown;
  container?: string;
  previous?: boolean;
  follow?: boolean;
  tail?: unknown;
}

/**
 * Reads an attempt's output when no log file is recorded for it (docker: from the engine by runtime
 * id): its last `tail` lines, or all of it. The tail is the engine's to take (its json-file reader
 * seeks from the end), so a multi-GB log costs what the answer costs.
 */
export type LogReader = (attempt: AttemptRow, tail?: number) => Promise<string>;
/** Prints an attempt's output as it comes until `signal` aborts (an engine's follow; files are followed here). */
export type LogFollower = (attempt: AttemptRow, tail: number | undefined, onText: (text: string) => void, signal: AbortSignal) => Promise<void>;

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
  const { spec } = pod.object;
  const names = [...(spec.initContainers ?? []), ...spec.containers, ...(spec.ephemeralContainers ?? [])].map((c) => c.name);
  let container = options.container;
  if (container === undefined) {
    container = spec.containers[0]?.name ?? names[0]!;
    if (spec.containers.length > 1) stderr(`Defaulted container "${container}" out of: ${allContainerNames(spec)}\n`);
  } else if (!names.includes(container)) {
    throw new UserError(`container ${container} is not valid for pod ${podName}`);
  }
  const choice = chooseAttempt(reader.store, pod, container, options.previous === true);
  if (choice.kind !== "attempt") {
    throw new UserError(
      choice.kind === "no-previous"
        ? `previous terminated container "${container}" in pod "${podName}" not found`
        : `container "${container}" in pod "${podName}" has not started yet`,
    );
  }
  const { attempt, current } = choice;
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
      text = await deps.readLogs(attempt, tail);
    } catch (error) {
      if (pod.deletedAt !== null) throw deletedPodLogs(`logs of container "${container}" attempt ${attempt.attempt}`, pod.name, pod.deletedAt);
      throw error;
    }
    stdout(tailLines(text, tail));
    return 0;
  }
  const follow = options.follow === true && !options.previous;
  const signal = follow ? (deps.signal ?? interruptSignal()) : new AbortController().signal;
  const utf8 = new StringDecoder("utf8");
  try {
    await writeAttemptLogs(attempt, { tailLines: tail, follow }, { store: reader.store, clock, signal, intervalMs: deps.intervalMs ?? 500 }, (bytes) => {
      const text = utf8.write(Buffer.from(bytes));
      if (text) stdout(text);
    });
  } catch (error) {
    if (!(error instanceof LogFileError)) throw error;
    const subject = `logs of container "${container}" attempt ${attempt.attempt}`;
    if (pod.deletedAt !== null) throw deletedPodLogs(subject, pod.name, pod.deletedAt);
    const why = attempt.attempt < current.attempt - 1 ? "; the runtime keeps only the current and previous attempt" : "";
    throw new UserError(`${subject}: ${error.message}${why}`);
  }
  const rest = utf8.end();
  if (rest) stdout(rest);
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

/** kubectl's podcmd.AllContainerNames: the containers, then the ephemeral and init ones marked. */
function allContainerNames(spec: V1PodSpec): string {
  return [
    ...spec.containers.map((c) => c.name),
    ...(spec.ephemeralContainers ?? []).map((c) => `${c.name} (ephem)`),
    ...(spec.initContainers ?? []).map((c) => `${c.name} (init)`),
  ].join(", ");
}
