/**
 * Stopping containers the kubelet's way, without blocking the loop: preStop first (its time comes
 * out of the grace period), then SIGTERM, then SIGKILL once the remaining grace (at least 2s) is
 * gone. Each step is started here and its outcome picked up by a later pass.
 */
import { podFullDescription, transition, type ContainerRecord, type PodRecord, type Stopping } from "../pod-state.ts";
import { MIN_GRACE_MS, type SyncContext } from "../sync-context.ts";
import { runLifecycleHandler } from "./lifecycle-hooks.ts";
import { abandonPostStart } from "./post-start.ts";
import { goDuration } from "../../printers/go-duration.ts";
import { restartsAfterProbeKill } from "../restart-policy.ts";
import { stopSignalOf } from "./stop-signal.ts";
import { exitEvent, terminationOf } from "../container-lifecycle.ts";
import { ContainerNotFoundError } from "../../runtime/runtime.ts";

/** How soon a SIGKILL is sent again while its container still runs. */
const SIGKILL_RETRY_MS = 2000;

/** The kubelet's words: ", will be restarted" only when the policy at the kill says it will be. */
export function killingMessage(pod: PodRecord, container: ContainerRecord, cause: Stopping["cause"]): string {
  const then = restartsAfterProbeKill(pod.spec.restartPolicy, container) ? ", will be restarted" : "";
  switch (cause) {
    case "liveness":
      return `Container ${container.name} failed liveness probe${then}`;
    case "startup":
      return `Container ${container.name} failed startup probe${then}`;
    case "changed":
      return `Container ${container.name} definition changed, will be restarted`;
    case "resize":
      return `Container ${container.name} resize requires restart`;
    case "postStart":
      // The kubelet's killContainer is given the bare reason as its message.
      return "FailedPostStartHook";
    default:
      return `Stopping container ${container.name}`;
  }
}

/** Begins stopping a running container; a container already stopping is left alone (idempotent). */
export function beginStop(
  ctx: SyncContext,
  pod: PodRecord,
  container: ContainerRecord,
  cause: Stopping["cause"],
  graceMs: number,
  message = killingMessage(pod, container, cause),
): void {
  if (container.state !== "running" || container.stopping || !container.containerId) return;
  const now = ctx.clock.now();
  container.stopping = { cause, startedAt: now, graceMs, stage: "preStop" };
  container.ready = false;
  // The kubelet cancels a hook still running when the pod is stopped: the stop never waits on it.
  if (cause !== "postStart") abandonPostStart(container);
  ctx.event(pod, "Normal", "Killing", container, message);
  const hook = container.spec.preStop;
  if (!hook || graceMs <= 0) {
    sendTerm(ctx, pod, container);
    return;
  }
  const id = container.containerId;
  ctx.wakeAt(pod, now + graceMs);
  const target = { containerId: id, podIP: pod.sandbox?.ip ?? "127.0.0.1", container: container.name, pod: podFullDescription(pod) };
  runLifecycleHandler(ctx.runtime, ctx.clock, hook, target, graceMs)
    .then((result) => {
      if (result.ok || ctx.stopped()) return;
      // The kubelet keeps the handler's message out of the event (it may hold secrets) and logs it.
      ctx.log(`${pod.spec.fullName} ${container.name}: ${result.message}`);
      ctx.event(pod, "Warning", "FailedPreStopHook", container, "PreStopHook failed");
    })
    .finally(() => {
      if (ctx.stopped()) return;
      if (container.containerId === id && container.stopping?.stage === "preStop") {
        sendTerm(ctx, pod, container);
        ctx.requestSync(pod);
      }
    });
}

function sendTerm(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): void {
  const stopping = container.stopping;
  if (!stopping || !container.containerId) return;
  const now = ctx.clock.now();
  const remaining = Math.max(stopping.graceMs - (now - stopping.startedAt), MIN_GRACE_MS);
  stopping.stage = "sigterm";
  stopping.deadline = now + remaining;
  ctx.wakeAt(pod, stopping.deadline);
  const signal = stopSignalOf(container);
  ctx.runtime.killContainer(container.containerId, signal).catch((error) => ctx.log(`${signal} ${container.name}: ${error}`));
}

/** Moves a stop along: SIGTERM when preStop overran the grace, SIGKILL when the deadline passed. */
export async function advanceStop(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): Promise<void> {
  const stopping = container.stopping;
  if (!stopping || container.state !== "running" || !container.containerId) return;
  const now = ctx.clock.now();
  if (stopping.stage === "preStop") {
    if (now >= stopping.startedAt + stopping.graceMs) sendTerm(ctx, pod, container);
    else ctx.wakeAt(pod, stopping.startedAt + stopping.graceMs);
    return;
  }
  if (stopping.deadline === undefined) return;
  if (now < stopping.deadline) {
    ctx.wakeAt(pod, stopping.deadline);
    return;
  }
  if (stopping.stage === "sigterm") {
    stopping.stage = "sigkill";
    ctx.event(
      pod,
      "Warning",
      "GraceExpired",
      container,
      `Container ${container.name} did not stop within its grace period (${goDuration(stopping.graceMs)}); sending SIGKILL`,
    );
  }
  // Sent again on every pass until the container is seen gone: a SIGKILL the runtime refused (the
  // engine restarting; the pass fails and reports it) or one from before an agent restart must not
  // leave it running for good. The wake-up is armed first, so a pass comes even if no event does.
  ctx.wakeAt(pod, now + SIGKILL_RETRY_MS);
  const id = container.containerId;
  try {
    await ctx.runtime.killContainer(id, "SIGKILL");
  } catch (error) {
    if (!(error instanceof ContainerNotFoundError)) throw error;
    // The kubelet takes a container its runtime cannot find for gone (ContainerStatusUnknown):
    // signalling one the runtime refuses to touch would keep the pod terminating forever.
    const termination = terminationOf({ id, state: "unknown" }, container.startedAt, now);
    // Not killed by us, so no kill cause.
    transition(container, { state: "terminated", terminated: termination, ready: false, started: false });
    ctx.event(pod, "Warning", "Exited", container, `${exitEvent(container.name, termination).message}: ${error.message}`);
  }
}

/**
 * A stop under way gets a shorter grace (a second delete through the API): SIGKILL comes no later
 * than the new grace allows, never sooner than the kubelet's floor from now.
 */
export function shortenStop(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, graceMs: number): void {
  const stopping = container.stopping;
  if (!stopping || container.state !== "running") return;
  stopping.graceMs = Math.min(stopping.graceMs, graceMs);
  if (stopping.deadline === undefined) {
    ctx.wakeAt(pod, stopping.startedAt + stopping.graceMs);
    return;
  }
  const now = ctx.clock.now();
  stopping.deadline = Math.min(stopping.deadline, now + Math.max(graceMs, MIN_GRACE_MS));
  ctx.wakeAt(pod, stopping.deadline);
}

/** The grace left for a pod that began terminating at `since`, never below the kubelet's floor. */
export function remainingPodGraceMs(pod: PodRecord, now: number): number {
  const graceMs = (pod.deletionGraceSeconds ?? pod.spec.terminationGracePeriodSeconds) * 1000;
  const used = pod.deletionRequestedAt === undefined ? 0 : now - pod.deletionRequestedAt;
  return Math.max(graceMs - used, 0);
}
