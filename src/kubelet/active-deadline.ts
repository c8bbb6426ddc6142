/**
 * `activeDeadlineSeconds`, as the kubelet's activeDeadlineHandler (pkg/kubelet/active_deadline.go):
 * a pod active on the node for its deadline, counted from its start time, is evicted with reason
 * DeadlineExceeded (a Normal event, the pod Failed with the handler's message, its containers
 * stopped with the pod's grace period, nothing restarted). Until then the pod is woken at its
 * deadline, so no other pass need come by. The start time is the agent's (the first container
 * start): a pod none of whose containers ever started has none, as the handler then does nothing.
 */
import { isTerminalPhase } from "./status/phase.ts";
import type { PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

export const DEADLINE_EXCEEDED = { reason: "DeadlineExceeded", message: "Pod was active on the node longer than the specified deadline" } as const;

/** Evicts the pod if it is past its deadline (true), else arms its wake-up at the deadline. */
export function enforceActiveDeadline(ctx: SyncContext, pod: PodRecord): boolean {
  const seconds = pod.spec.activeDeadlineSeconds;
  if (seconds === undefined || pod.startTime === undefined || pod.evicted || pod.rejected || isTerminalPhase(pod.phase)) return false;
  const deadline = pod.startTime + seconds * 1000;
  if (ctx.clock.now() < deadline) {
    ctx.wakeAt(pod, deadline);
    return false;
  }
  pod.evicted = { ...DEADLINE_EXCEEDED, graceMs: pod.spec.terminationGracePeriodSeconds * 1000 };
  ctx.event(pod, "Normal", DEADLINE_EXCEEDED.reason, undefined, DEADLINE_EXCEEDED.message);
  return true;
}
