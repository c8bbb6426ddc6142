/**
 * A pod's sandbox can die under it: the pause container killed, or every container stopped by a
 * Docker daemon restarting without live-restore. A dead sandbox cannot be restarted into the same
 * namespaces, so, like the kubelet's computePodActions ("Pod sandbox changed, it will be killed
 * and re-created"), the pod gets a new sandbox and its containers run again inside it.
 *
 * Checking costs a runtime call, so the loop checks only when it has a reason to suspect the
 * sandbox: an event about the sandbox container itself, or the runtime coming back after an outage.
 * What follows is the plan's (compute-pod-actions.ts): as in the kubelet, the init containers run
 * again, in order, before the app containers restart in the new sandbox (their restart counts go
 * on; Init:0/N shows meanwhile), and what ran in the old one is killed.
 */
import { sandboxNeedsReplacing, type SandboxView } from "./compute-pod-actions.ts";
import { allContainers, transition, type PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

/**
 * Asks the runtime about `pod.sandbox`: `runPodSandbox` returns the running one or replaces a dead
 * one (its contract is idempotent), and a replacement becomes the pod's (`replaced`). A pod that
 * must not restart gets no new sandbox: its old one is only looked at (`died` when it is gone).
 * Rejects when the runtime cannot answer (the caller retries).
 */
export async function checkSandbox(ctx: SyncContext, pod: PodRecord): Promise<SandboxView> {
  const old = pod.sandbox;
  if (!old) return "missing";
  if (!sandboxNeedsReplacing(pod)) {
    const alive = (await ctx.runtime.listPodSandboxes()).some((s) => s.id === old.id && s.ready);
    return alive ? "ready" : "died";
  }
  const fresh = await ctx.runtime.runPodSandbox(pod.spec);
  if (fresh.id === old.id) return "ready";
  pod.sandbox = fresh;
  ctx.untrack(old.id);
  ctx.track(fresh.id, pod);
  return "replaced";
}

/** In a new sandbox the pod is not initialized: its init containers that ran wait to run again. */
export function resetInit(pod: PodRecord, containers: readonly string[]): void {
  pod.initialized = false;
  for (const container of allContainers(pod)) {
    if (container.state !== "terminated" || !containers.includes(container.name)) continue;
    container.lastTermination = container.terminated;
    transition(container, { state: "waiting", waiting: { reason: "PodInitializing" }, ready: false, started: false });
  }
}

/** A container still running in a dead sandbox's namespaces is killed at once; its exit comes later. */
export async function killStranded(ctx: SyncContext, pod: PodRecord, name: string, message: string): Promise<void> {
  const container = allContainers(pod).find((c) => c.name === name);
  if (container?.state !== "running" || !container.containerId) return;
  container.ready = false;
  ctx.event(pod, "Normal", "Killing", container, message);
  await ctx.runtime.killContainer(container.containerId, "SIGKILL");
}
