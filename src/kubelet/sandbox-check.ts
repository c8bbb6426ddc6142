/**
 * A pod's sandbox can die under it: the pause container killed, or every container stopped by a
 * Docker daemon restarting without live-restore. A dead sandbox cannot be restarted into the same
 * namespaces, so, like the kubelet's computePodActions ("Pod sandbox changed, it will be killed
 * and re-created"), the pod gets a new sandbox and its containers run again inside it.
 *
 * Checking costs a runtime call, so the loop checks only when it has a reason to suspect the
 * sandbox: an event about the sandbox container itself, or the runtime coming back after an outage.
 * As in the kubelet, the init containers run again, in order, before the app containers restart
 * in the new sandbox (their restart counts go on; Init:0/N shows meanwhile).
 */
import { allContainers, transition, type PodRecord } from "./pod-state.ts";
import { isContainerRestartable } from "./restart-policy.ts";
import type { SyncContext } from "./sync-context.ts";

/**
 * Makes sure `pod.sandbox` is a live sandbox: `runPodSandbox` returns the running one or replaces a
 * dead one (its contract is idempotent). On a change, running containers of the pod, stranded in
 * the old namespaces, are killed; their exits are recorded on a later pass and the restart policy
 * starts them in the new sandbox. Rejects when the runtime cannot answer (the caller retries).
 */
export async function ensureSandboxAlive(ctx: SyncContext, pod: PodRecord): Promise<void> {
  const old = pod.sandbox;
  if (!old) return;
  // Like computePodActions: a pod that must not restart (Never, and no app container whose own
  // policy or rules could restart it) and has run gets no new sandbox; what ran in the dead one
  // is stopped and the pod finishes with what it has.
  const runOnce = pod.spec.restartPolicy === "Never" && !pod.app.some((c) => isContainerRestartable(pod.spec.restartPolicy, c));
  if (runOnce && allContainers(pod).some((c) => c.attempts > 0)) {
    const alive = (await ctx.runtime.listPodSandboxes()).some((s) => s.id === old.id && s.ready);
    if (!alive) await killStranded(ctx, pod, "its pod sandbox died and restartPolicy is Never");
    return;
  }
  const fresh = await ctx.runtime.runPodSandbox(pod.spec);
  if (fresh.id === old.id) return;
  pod.sandbox = fresh;
  ctx.untrack(old.id);
  ctx.track(fresh.id, pod);
  ctx.event(pod, "Normal", "SandboxChanged", undefined, "Pod sandbox changed, it will be killed and re-created.");
  const inits = pod.init.filter((c) => c.kind === "init");
  if (inits.length > 0) {
    pod.initialized = false;
    for (const container of inits) {
      if (container.state !== "terminated") continue;
      container.lastTermination = container.terminated;
      transition(container, { state: "waiting", waiting: { reason: "PodInitializing" }, ready: false, started: false });
    }
  }
  await killStranded(ctx, pod, "its pod sandbox changed");
}

/** Containers still running in a dead sandbox's namespaces are killed; their exits come later. */
async function killStranded(ctx: SyncContext, pod: PodRecord, why: string): Promise<void> {
  for (const container of allContainers(pod)) {
    if (container.state !== "running" || !container.containerId) continue;
    container.ready = false;
    ctx.event(pod, "Normal", "Killing", container, `Stopping container ${container.name}: ${why}`);
    await ctx.runtime.killContainer(container.containerId, "SIGKILL");
  }
}
