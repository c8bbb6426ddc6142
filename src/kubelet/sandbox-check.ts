/**
 * A pod's sandbox can die under it: the pause container killed, or every container stopped by a
 * Docker daemon restarting without live-restore. A dead sandbox cannot be restarted into the same
 * namespaces, so, like the kubelet's computePodActions ("Pod sandbox changed, it will be killed
 * and re-created"), the pod gets a new sandbox and its containers run again inside it.
 *
 * Checking costs a runtime call, so the loop checks only when it has a reason to suspect the
 * sandbox: an event about the sandbox container itself, or the runtime coming back after an outage.
 * Init containers that already succeeded are not run again in the new sandbox (the kubelet does
 * re-run them); their effects on emptyDir volumes live on the host and survive.
 */
import { allContainers, type PodRecord } from "./pod-state.ts";
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
  const fresh = await ctx.runtime.runPodSandbox(pod.spec);
  if (fresh.id === old.id) return;
  pod.sandbox = fresh;
  ctx.untrack(old.id);
  ctx.track(fresh.id, pod);
  ctx.event(pod, "Normal", "SandboxChanged", undefined, "Pod sandbox changed, it will be killed and re-created.");
  for (const container of allContainers(pod)) {
    if (container.state !== "running" || !container.containerId) continue;
    container.ready = false;
    ctx.event(pod, "Normal", "Killing", container, `Stopping container ${container.name}: its pod sandbox changed`);
    await ctx.runtime.killContainer(container.containerId, "SIGKILL");
  }
}
