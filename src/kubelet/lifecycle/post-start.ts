/**
 * postStart, as the kubelet's startContainer runs it right after the runtime started the container
 * (pkg/kubelet/kuberuntime/kuberuntime_container.go): until the hook returns, the pod's worker is
 * held inside that start, so the container is reported as it was before (waiting, not started, not
 * ready, unprobed) and no other container of the pod is started. A failed hook is an event
 * (`FailedPostStartHook`, `PostStartHook failed`), a kill (`Killing` with `FailedPostStartHook`), and
 * the container waits with reason PostStartHookError and the handler's message until the restart
 * policy restarts it.
 *
 * Here the hook runs beside the loop: begun with the start, its outcome kept until a later pass
 * takes it (applyPostStart), which never waits for it.
 */
import type { ContainerPhase, ContainerRecord, PodRecord } from "../pod-state.ts";
import { podFullDescription } from "../pod-state.ts";
import type { SyncContext } from "../sync-context.ts";
import { runLifecycleHandler, type HookResult } from "./lifecycle-hooks.ts";

/**
 * The kubelet gives a postStart exec no deadline (a TODO in handlers.go), so a command that never
 * returns keeps its container out of Running for good; here one that runs this long fails the hook,
 * so the container is killed and restarted by its policy rather than left stuck for ever.
 */
export const POST_START_TIMEOUT_MS = 10 * 60_000;

/** The waiting reason a container shows once its postStart failed (the kubelet's ErrPostStartHook). */
export const POST_START_HOOK_ERROR = "PostStartHookError";

interface HookRun {
  containerId: string;
  controller: AbortController;
  result?: HookResult;
}

/**
 * The hooks this agent runs, by record (records live as long as their pod). A record that says a
 * hook runs but has no run here was checkpointed by an agent that has since restarted.
 */
const runs = new WeakMap<ContainerRecord, HookRun>();

/** Starts the container's postStart hook, if it has one, for the attempt that just started. */
export function beginPostStart(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): void {
  const hook = container.spec.postStart;
  const id = container.containerId;
  if (!hook || !id) return;
  container.postStart = { startedAt: ctx.clock.now() };
  container.started = false;
  container.ready = false;
  const run: HookRun = { containerId: id, controller: new AbortController() };
  runs.set(container, run);
  const target = { containerId: id, podIP: pod.sandbox?.ip ?? "127.0.0.1", container: container.name, pod: podFullDescription(pod) };
  void runLifecycleHandler(ctx.runtime, ctx.clock, hook, target, POST_START_TIMEOUT_MS, run.controller.signal).then((result) => {
    if (ctx.stopped() || runs.get(container) !== run) return;
    run.result = result;
    ctx.requestSync(pod);
  });
}

/** Stops waiting for the hook (the container is being stopped or has ended): a sleep or request is cut short, its outcome dropped. */
export function abandonPostStart(container: ContainerRecord): void {
  const run = runs.get(container);
  if (run) {
    runs.delete(container);
    run.controller.abort();
  }
  if (container.postStart && container.postStart.failed === undefined) container.postStart = undefined;
}

export type PostStartState = "none" | "running" | "failed";

/**
 * Takes a finished hook's outcome into the record: `running` while it has not returned, `failed`
 * the pass its failure is taken (the caller kills the container), else `none`.
 */
export function applyPostStart(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): PostStartState {
  const pending = container.postStart;
  if (!pending || pending.failed !== undefined) return "none";
  const run = runs.get(container);
  if (container.state !== "running" || !run || run.containerId !== container.containerId) {
    // Ended under the hook, or an agent restarted under it: like a restarted kubelet, the hook is
    // not run again and a running container counts as started.
    abandonPostStart(container);
    if (container.state === "running") finishPostStart(container);
    return "none";
  }
  if (!run.result) return "running";
  runs.delete(container);
  if (run.result.ok) {
    container.postStart = undefined;
    finishPostStart(container);
    return "none";
  }
  pending.failed = run.result.message;
  // The handler's message stays out of the event, as the kubelet keeps it (it may hold secrets).
  ctx.log(`${pod.spec.fullName} ${container.name}: ${run.result.message}`);
  ctx.event(pod, "Warning", "FailedPostStartHook", container, "PostStartHook failed");
  return "failed";
}

function finishPostStart(container: ContainerRecord): void {
  container.started = !container.spec.startupProbe;
  container.ready = container.started && !container.spec.readinessProbe;
}

/** The state the status reports: a container whose postStart has not returned, or failed, is still waiting. */
export function reportedState(container: ContainerRecord): ContainerPhase {
  return container.state === "running" && container.postStart !== undefined ? "waiting" : container.state;
}

/** The hook of the current attempt has not returned: the container is reported as not yet running. */
export function postStartRunning(container: ContainerRecord): boolean {
  return container.state === "running" && container.postStart !== undefined && container.postStart.failed === undefined;
}

/** The hook failed and the container is being killed: it waits with the kubelet's PostStartHookError. */
export function postStartFailed(container: ContainerRecord): string | undefined {
  return container.state === "running" ? container.postStart?.failed : undefined;
}
