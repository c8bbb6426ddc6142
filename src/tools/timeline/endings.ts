/**
 * How each attempt ended, from the attempts the store kept and the pod's own events: an exit code
 * says Completed or Error, the runtime says OOMKilled, and a `Killing` event inside the attempt says
 * that a probe or the agent ended it. Nothing is guessed from the exit code alone.
 */
import type { AttemptRow, EventRow } from "../../store/queries.ts";
import type { ContainerKind } from "../../runtime/runtime.ts";
import type { Ending, MarkKind, TimelineAttempt, TimelineContainer, TimelineMark } from "./model.ts";

const PROBE_KILL = /failed (liveness|startup) probe/;
const AGENT_STOP = /^Stopping container /;

/** A `Killing` event row: the store keeps one per message, with the first and last time and a count. */
interface KillWindow {
  ending: "probe-kill" | "stopped";
  message: string;
  count: number;
  firstAt: number;
  lastAt: number;
}

export interface ContainerHistory {
  name: string;
  kind: ContainerKind;
  /** The newest attempts, oldest first. */
  attempts: AttemptRow[];
  /** Every attempt the store has for the container, loaded or not. */
  totalAttempts: number;
  waitingNow: boolean;
}

/** The timeline's rows from what the store holds for one pod. */
export function timelineContainers(histories: ContainerHistory[], events: EventRow[], now: number): TimelineContainer[] {
  return histories.map((history) => {
    const own = events.filter((event) => event.container === history.name);
    const kills = own.filter((event) => event.reason === "Killing").map(killWindow).filter((w): w is KillWindow => w !== undefined);
    const attempts = history.attempts.filter((row) => row.startedAt !== null || row.finishedAt !== null).map((row) => timelineAttempt(row, now));
    closeUnrecordedEnds(attempts);
    for (const kill of kills) attributeKill(attempts, kill);
    return {
      name: history.name,
      kind: history.kind,
      attempts,
      marks: own.flatMap(marksOf),
      waitingNow: history.waitingNow,
      unloadedAttempts: Math.max(0, history.totalAttempts - history.attempts.length),
    };
  });
}

function timelineAttempt(row: AttemptRow, now: number): TimelineAttempt {
  // A start that failed has only a finish (or both at the same instant): a bar of no length.
  const startedAt = row.startedAt ?? row.finishedAt ?? now;
  const attempt: TimelineAttempt = { attempt: row.attempt, startedAt, ending: exitEnding(row) };
  if (row.finishedAt !== null) attempt.finishedAt = Math.max(row.finishedAt, startedAt);
  if (row.exitCode !== null) attempt.exitCode = row.exitCode;
  if (row.reason !== null) attempt.reason = row.reason;
  return attempt;
}

/**
 * An attempt without a finish that is followed by another ended unseen (its exit was never
 * recorded): it is drawn up to the next start, not to now across the attempts after it.
 */
function closeUnrecordedEnds(attempts: TimelineAttempt[]): void {
  attempts.forEach((attempt, index) => {
    const next = attempts[index + 1];
    if (attempt.finishedAt !== undefined || !next) return;
    attempt.finishedAt = Math.max(attempt.startedAt, next.startedAt);
    attempt.ending = "unrecorded";
  });
}

function exitEnding(row: AttemptRow): Ending {
  if (row.finishedAt === null) return "running";
  if (row.reason === "OOMKilled") return "oom";
  return row.exitCode === 0 ? "completed" : "error";
}

function killWindow(event: EventRow): KillWindow | undefined {
  const ending = PROBE_KILL.test(event.message) ? "probe-kill" : AGENT_STOP.test(event.message) ? "stopped" : undefined;
  if (!ending) return undefined;
  return { ending, message: event.message, count: event.count, firstAt: event.firstAt, lastAt: event.lastAt };
}

/**
 * Marks the attempts a kill ended. The first and last kill times are known, so the attempts running
 * at those instants were killed. Between them, the store only kept the count: when the attempts
 * that ended by a signal in that window are no more than the kills counted, each of them was one.
 */
function attributeKill(attempts: TimelineAttempt[], kill: KillWindow): void {
  const killed = (attempt: TimelineAttempt) => {
    if (attempt.ending === "oom" || attempt.ending === "running") return;
    attempt.ending = kill.ending;
    attempt.killedBecause = kill.message;
  };
  const spans = (attempt: TimelineAttempt, at: number) => attempt.startedAt <= at && at <= (attempt.finishedAt ?? Infinity);
  const atEdges = attempts.filter((attempt) => spans(attempt, kill.firstAt) || spans(attempt, kill.lastAt));
  const between = attempts.filter(
    (attempt) => !atEdges.includes(attempt) && attempt.startedAt > kill.firstAt && (attempt.finishedAt ?? Infinity) < kill.lastAt && endedBySignal(attempt),
  );
  atEdges.forEach(killed);
  if (atEdges.length + between.length <= kill.count) between.forEach(killed);
}

function endedBySignal(attempt: TimelineAttempt): boolean {
  return attempt.exitCode !== undefined && attempt.exitCode > 128;
}

const MARK_KINDS: Record<string, MarkKind | undefined> = { Unhealthy: "unhealthy", Ready: "ready", NotReady: "not-ready" };

function marksOf(event: EventRow): TimelineMark[] {
  const kind = MARK_KINDS[event.reason];
  if (!kind) return [];
  const mark = { kind, message: event.message, count: event.count, firstAt: event.firstAt, lastAt: event.lastAt };
  return event.count > 1 && event.lastAt !== event.firstAt ? [{ ...mark, at: event.firstAt }, { ...mark, at: event.lastAt }] : [{ ...mark, at: event.firstAt }];
}
