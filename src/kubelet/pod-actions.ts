/**
 * One pod's pass, the part the kubelet's SyncPod and computePodActions do: the sandbox first, then
 * the init containers in order, the app containers by the restart policy, the probes' verdicts,
 * and the stops under way; for a pod going away, its containers stopped in the kubelet's order.
 */
import type { PodKey } from "../manifest/types.ts";
import { startOrBackOff } from "./container-lifecycle.ts";
import { syncDownwardVolumes } from "./downward-volumes.ts";
import { restartChangedContainers } from "./container-changes.ts";
import { isTerminalPhase, podPhase } from "./phase.ts";
import { allContainers, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import { applyProbeVerdicts, type ProbeDriver } from "./probe-actions.ts";
import { containerShouldRestart } from "./restart-policy.ts";
import { ensureSandboxAlive } from "./sandbox-check.ts";
import type { SyncContext } from "./sync-context.ts";
import { advanceStop, beginStop, remainingPodGraceMs } from "./termination.ts";
import { applyPostStart, postStartRunning } from "./post-start.ts";
import { stopEvicted } from "./empty-dir-eviction.ts";
import { terminationRequested } from "./pod-deletion.ts";

/** A failed sandbox creation is tried again this much later. */
const SANDBOX_RETRY_MS = 5000;

export interface PodPass {
  ctx: SyncContext;
  probes?: ProbeDriver;
  /** Pods whose sandbox may have died (an event about it, the runtime back from an outage): looked at on their next pass. */
  sandboxSuspects: Set<PodKey>;
}

/** A pod that is wanted: its sandbox, its containers started in order, its probes acted on, its stops moved along. */
export async function syncRunning(pass: PodPass, pod: PodRecord): Promise<void> {
  const { ctx } = pass;
  if (pod.sandbox && pass.sandboxSuspects.delete(pod.spec.key)) {
    try {
      await ensureSandboxAlive(ctx, pod);
    } catch (error) {
      pass.sandboxSuspects.add(pod.spec.key);
      throw error;
    }
  }
  if (!pod.sandbox) {
    try {
      const { warnings, ...sandbox } = await ctx.runtime.runPodSandbox(pod.spec);
      pod.sandbox = sandbox;
      ctx.track(pod.sandbox.id, pod);
      for (const warning of warnings ?? []) ctx.event(pod, "Warning", "MemoryMediumUnavailable", undefined, warning);
    } catch (error) {
      ctx.event(pod, "Warning", "FailedCreatePodSandBox", undefined, `Failed to create pod sandbox: ${error instanceof Error ? error.message : String(error)}`);
      ctx.wakeAt(pod, ctx.clock.now() + SANDBOX_RETRY_MS);
      return;
    }
  }
  // As the kubelet's pod worker cancels a sync once its pod is to terminate: the pass stops here,
  // and the pass the request queued stops what this one started.
  if (terminationRequested(pod)) return;
  if (pod.evicted) stopEvicted(ctx, pod);
  // The kubelet's worker is held inside a start until its postStart hook returns: nothing else of the pod starts meanwhile.
  const hookRunning = takePostStartOutcomes(ctx, pod);
  if (!isTerminalPhase(podPhase(pod)) && !hookRunning) {
    restartChangedContainers(ctx, pod);
    // Before the init containers, as the kubelet's SyncPod does: a debug container runs even while an init container fails.
    await startEphemeral(ctx, pod);
    if (await syncInit(ctx, pod)) await syncApps(ctx, pod);
    // A container that could not start may have met a dead sandbox (a pause container's
    // namespaces cannot be joined once it is gone): look at the sandbox on the next pass.
    if (allContainers(pod).some((c) => c.state === "terminated" && c.terminated?.containerId === "")) pass.sandboxSuspects.add(pod.spec.key);
  }
  if (terminationRequested(pod)) return;
  if (isTerminalPhase(podPhase(pod))) {
    // A finished pod stops its sidecars, last declared first (KEP-753).
    stopNextSidecar(ctx, pod, "completed", remainingPodGraceMs(pod, ctx.clock.now()));
  } else if (pass.probes) {
    for (const container of allContainers(pod)) syncProbes(ctx, pod, container, pass.probes);
  }
  for (const container of allContainers(pod)) await advanceStop(ctx, pod, container);
  // Each start writes them first; this keeps them current once the labels or annotations change.
  syncDownwardVolumes(ctx, pod, true);
}

/** A pod going away: its containers stopped (sidecars last, in reverse order); true once none runs. */
export async function syncTerminating(pass: PodPass, pod: PodRecord): Promise<boolean> {
  const { ctx } = pass;
  const cause = pod.deletionCause ?? "removed";
  const graceMs = remainingPodGraceMs(pod, ctx.clock.now());
  const mains = allContainers(pod).filter((c) => c.kind !== "sidecar" && c.state === "running");
  for (const container of mains) beginStop(ctx, pod, container, cause, graceMs);
  if (mains.length === 0) stopNextSidecar(ctx, pod, cause, graceMs);
  for (const container of allContainers(pod)) await advanceStop(ctx, pod, container);
  return !allContainers(pod).some((c) => c.state === "running");
}

/** True while a postStart hook runs; a failed one has its container killed (`FailedPostStartHook`) and the restart policy takes it from there. */
function takePostStartOutcomes(ctx: SyncContext, pod: PodRecord): boolean {
  let running = false;
  for (const container of allContainers(pod)) {
    const state = applyPostStart(ctx, pod, container);
    if (state === "running") running = true;
    else if (state === "failed") beginStop(ctx, pod, container, "postStart", pod.spec.terminationGracePeriodSeconds * 1000);
  }
  return running;
}

/** Keeps a running attempt probed, and acts on its verdicts; an attempt being stopped, or whose postStart hook runs, is not probed. */
function syncProbes(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, probes: ProbeDriver): void {
  const id = container.containerId;
  if (!id || container.state !== "running" || container.startedAt === undefined || postStartRunning(container)) return;
  if (container.stopping) return probes.forget(id);
  probes.probe({ podKey: pod.spec.key, pod: { namespace: pod.spec.namespace, name: pod.spec.fullName, uid: pod.spec.uid }, containerId: id, container: container.spec, startedAt: container.startedAt, podIP: pod.sandbox?.ip ?? "127.0.0.1", saved: container.probeCounters });
  applyProbeVerdicts(ctx, pod, container, probes.results);
  if (container.stopping) probes.forget(id);
  else container.probeCounters = probes.counters(id);
}

/** Each ephemeral container starts once, when it was added; whatever ends it, it is never started again. */
async function startEphemeral(ctx: SyncContext, pod: PodRecord): Promise<void> {
  for (const container of pod.ephemeral ?? []) {
    if (terminationRequested(pod)) return;
    if (container.attempts === 0) await startOrBackOff(ctx, pod, container);
  }
}

/** Init containers one at a time; sidecars let the next one start once they have started. */
async function syncInit(ctx: SyncContext, pod: PodRecord): Promise<boolean> {
  if (pod.initFailed) return false;
  for (const container of pod.init) {
    // Each start may take long (a spawn, a pull): a pod asked to go meanwhile starts nothing more.
    if (terminationRequested(pod)) return false;
    if (container.kind === "sidecar") {
      if (container.state !== "running") await startOrBackOff(ctx, pod, container);
      if (postStartRunning(container)) return false;
      if (pod.initialized || (container.state === "running" && container.started)) continue;
      return false;
    }
    if (pod.initialized) continue;
    if (container.state === "terminated" && container.terminated?.exitCode === 0) continue;
    if (container.state === "running") return false;
    const lastExit = (container.terminated ?? container.lastTermination)?.exitCode;
    if (container.attempts > 0 && lastExit !== undefined && lastExit !== 0 && !containerShouldRestart(pod.spec.restartPolicy, container, lastExit)) {
      pod.initFailed = true;
      return false;
    }
    await startOrBackOff(ctx, pod, container);
    return false;
  }
  pod.initialized = true;
  return true;
}

async function syncApps(ctx: SyncContext, pod: PodRecord): Promise<void> {
  for (const container of pod.app) {
    if (terminationRequested(pod)) return;
    if (container.state === "running") continue;
    const last = container.terminated ?? container.lastTermination;
    // A changed definition restarts whatever the policy, as the kubelet does.
    if (container.attempts > 0 && last && !container.definitionChanged && !containerShouldRestart(pod.spec.restartPolicy, container, last.exitCode)) continue;
    await startOrBackOff(ctx, pod, container);
    if (postStartRunning(container)) return;
  }
}

/** Sidecars stop in reverse order of declaration, each after the later ones have exited. */
function stopNextSidecar(ctx: SyncContext, pod: PodRecord, cause: "removed" | "replaced" | "shutdown" | "completed", graceMs: number): void {
  if (pod.app.some((c) => c.state === "running")) return;
  const running = pod.init.filter((c) => c.kind === "sidecar" && c.state === "running");
  const last = running[running.length - 1];
  if (last) beginStop(ctx, pod, last, cause, graceMs);
}
