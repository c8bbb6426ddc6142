/**
 * Which attempt of a container `logs` reads, as the kubelet picks it: the current attempt, or with
 * `previous` the one in lastState.terminated. The CLI and the API word the "nothing to read" answers
 * their own way, so the reasons come back as values, not messages.
 */
import type { AttemptRow, PodRow, StoreReader } from "../store/queries.ts";

export type AttemptChoice =
  | { kind: "attempt"; attempt: AttemptRow; current: AttemptRow }
  /** `previous` asked, and no attempt ended before the current one. */
  | { kind: "no-previous" }
  /**
   * No attempt has started; `waitingReason` is the status's (ContainerCreating, ErrImagePull, ...),
   * `hasStatus` false when the pod reports no status for the container yet.
   */
  | { kind: "not-started"; hasStatus: boolean; waitingReason?: string };

export function chooseAttempt(store: StoreReader, pod: PodRow, container: string, previous: boolean): AttemptChoice {
  const attempts = store.attempts(pod.uid, container);
  const current = attempts.at(-1);
  const statuses = [...(pod.object.status?.initContainerStatuses ?? []), ...(pod.object.status?.containerStatuses ?? [])];
  const status = statuses.find((s) => s.name === container);
  const waiting = status?.state?.waiting;
  if (!current) return previous ? { kind: "no-previous" } : { kind: "not-started", hasStatus: status !== undefined, waitingReason: waiting?.reason };
  if (!previous) return { kind: "attempt", attempt: current, current };
  // lastState.terminated: while a container waits to restart (CrashLoopBackOff) that is the latest
  // attempt, else the one before it.
  const attempt = waiting !== undefined && current.finishedAt != null ? current : attempts.at(-2);
  return attempt ? { kind: "attempt", attempt, current } : { kind: "no-previous" };
}

/** The attempt has ended, or a newer one replaced it: a follow stops there, like `kubectl logs -f`. */
export function attemptEnded(store: StoreReader, attempt: AttemptRow): boolean {
  const latest = store.attempts(attempt.podUid, attempt.container).at(-1);
  return !latest || latest.attempt !== attempt.attempt || latest.finishedAt !== null;
}
