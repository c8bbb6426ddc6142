/**
 * The attempt a verdict explains, read from lastState before anything else: the terminated state
 * while the container stays down (restartPolicy Never, a finished init container), else
 * lastState.terminated. Its exact times come from the attempts table (the v1 status keeps seconds).
 */
import { parseTimestamp } from "../../printers/age.ts";
import type { AttemptFact, ContainerFacts } from "./facts.ts";
import type { Termination } from "./exit-cause.ts";

export interface EndedAttempt {
  source: "state" | "lastState";
  termination: Termination;
  attempt?: AttemptFact;
  startedAt?: number;
  finishedAt?: number;
}

export function endedAttempt(container: ContainerFacts): EndedAttempt | undefined {
  const status = container.status;
  const current = status?.state?.terminated;
  const terminated = current ?? status?.lastState?.terminated;
  if (!terminated) return undefined;
  const finishedSecond = parseTimestamp(terminated.finishedAt);
  const attempt = [...container.attempts]
    .reverse()
    .find((a) => a.finishedAt !== null && a.exitCode === terminated.exitCode && (finishedSecond === undefined || Math.floor(a.finishedAt / 1000) * 1000 === finishedSecond));
  const startedAt = attempt?.startedAt ?? parseTimestamp(terminated.startedAt);
  const finishedAt = attempt?.finishedAt ?? finishedSecond;
  const termination: Termination = { exitCode: terminated.exitCode };
  if (terminated.signal !== undefined) termination.signal = terminated.signal;
  if (terminated.reason) termination.reason = terminated.reason;
  if (terminated.message) termination.message = terminated.message;
  if (startedAt !== undefined && finishedAt !== undefined && attempt?.runtimeId !== "") termination.ranMs = finishedAt - startedAt;
  return { source: current ? "state" : "lastState", termination, attempt, startedAt, finishedAt };
}
