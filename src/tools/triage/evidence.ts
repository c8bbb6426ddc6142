/** How triage words the records it used: a container state, an event row, the attempt history. */
import { goDuration } from "../../printers/go-duration.ts";
import type { V1ContainerState } from "../../v1/v1.ts";
import type { AttemptFact, EventFact } from "./facts.ts";
import type { Evidence } from "./report.ts";

/** How many attempts are listed one by one; older ones are summed up. */
const LISTED_ATTEMPTS = 5;

/** `waiting (CrashLoopBackOff)`, with the waiting message unless `brief`. */
export function stateText(state: V1ContainerState, brief = false): string {
  if (state.running) return "running";
  if (state.waiting) return `waiting (${state.waiting.reason ?? "no reason"})${state.waiting.message && !brief ? `: ${state.waiting.message}` : ""}`;
  if (state.terminated) return `terminated (exit code ${state.terminated.exitCode}, ${state.terminated.reason ?? "no reason"})`;
  return "unknown";
}

export function eventText(event: EventFact): string {
  return `event ${event.type} ${event.reason}${event.count > 1 ? ` (x${event.count} since ${iso(event.firstAt)})` : ""}: ${event.message}`;
}

function attemptText(attempt: AttemptFact): string {
  if (attempt.finishedAt === null) return `attempt ${attempt.attempt}: running since ${attempt.startedAt === null ? "an unrecorded time" : iso(attempt.startedAt)}`;
  const ran = attempt.startedAt !== null && attempt.runtimeId !== "" ? ` after ${goDuration(attempt.finishedAt - attempt.startedAt)}` : "";
  const how = attempt.runtimeId === "" ? "could not start" : "exited";
  return `attempt ${attempt.attempt}: ${how} ${attempt.exitCode ?? "?"} (${attempt.reason ?? "no reason"})${ran}`;
}

/** A summary of every recorded start (how many ended how), then the latest few one by one. */
export function attemptEvidence(attempts: readonly AttemptFact[]): Evidence[] {
  if (attempts.length === 0) return [{ source: "attempts", text: "attempts: none recorded (it has never started)" }];
  const ends = new Map<string, number>();
  for (const attempt of attempts) {
    if (attempt.finishedAt === null) continue;
    const key = `exit ${attempt.exitCode ?? "?"} (${attempt.reason ?? "no reason"})`;
    ends.set(key, (ends.get(key) ?? 0) + 1);
  }
  const tally = [...ends].map(([key, count]) => `${count} x ${key}`).join(", ");
  const first = attempts[0]!;
  const summary: Evidence = {
    at: first.startedAt ?? undefined,
    source: "attempts",
    text: `attempts: ${attempts.length} start${attempts.length === 1 ? "" : "s"} since ${first.startedAt === null ? "?" : iso(first.startedAt)}${tally ? `; ${tally}` : ""}`,
  };
  const listed = attempts.slice(-LISTED_ATTEMPTS).map((attempt) => ({ at: attempt.finishedAt ?? attempt.startedAt ?? undefined, source: "attempts" as const, text: attemptText(attempt) }));
  return [summary, ...listed];
}

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
