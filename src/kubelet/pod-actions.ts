/**
 * One pod's pass, the part the kubelet's SyncPod does: what to do is decided by computePodActions
 * (compute-pod-actions.ts) on what the pass found (the sandbox, the containers as last seen, the
 * probes' verdicts, the back-off, the time), and carried out here in the kubelet's order: the
 * sandbox first, the kills, then the starts (ephemeral, init in order, app), then what the probes'
 * verdicts ask, and the stops under way moved along. For a pod going away, its containers are
 * stopped in the kubelet's order.
 */
import { enforceActiveDeadline } from "./active-deadline.ts";
import type { PodKey } from "../manifest/types.ts";
import { backoffKey, type BackoffEntry } from "./backoff.ts";
import {
  computeAfterStartActions,
  computePodActions,
  type ContainerToKill,
  type ContainerToStart,
  type PodActionsInput,
  type ProbeVerdicts,
  type SandboxView,
  type StartGate,
} from "./compute-pod-actions.ts";
import { startPlanned } from "./container-lifecycle.ts";
import { applyResizes } from "./resize-actions.ts";
import { syncPodVolumes } from "./volumes/pod-volumes.ts";
import { isTerminalPhase, podPhase } from "./status/phase.ts";
import { allContainers, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import { applyProbeOutcome, verdictsOf, type ProbeDriver } from "./probe-actions.ts";
import { checkSandbox, killStranded, resetInit } from "./sandbox-check.ts";
import type { SyncContext } from "./sync-context.ts";
import { advanceStop, beginStop } from "./lifecycle/termination.ts";
import { applyPostStart, postStartRunning } from "./lifecycle/post-start.ts";
import { terminationRequested } from "./pod-deletion.ts";

/** A failed sandbox creation is tried again this much later. */
const SANDBOX_RETRY_MS = 5000;

export interface PodPass {
  ctx: SyncContext;
  probes?: ProbeDriver;
  /** Pods whose sandbox may have died (an event about it, the runtime back from an outage): looked at on their next pass. */
  sandboxSuspects: Set<PodKey>;
}

/** The plan's input as the pass found the pod: plain data, read now. */
function actionsInput(pass: PodPass, pod: PodRecord, sandbox: SandboxView): PodActionsInput {
  const { ctx } = pass;
  const uid = pod.spec.uid;
  const entries: Record<string, BackoffEntry> = {};
  // Keys are `uid/name` (backoffKey).
  for (const entry of ctx.backoff.forPod(uid)) entries[entry.key.slice(uid.length + 1)] = entry;
  let probes: Record<string, ProbeVerdicts> | undefined;
  if (pass.probes) {
    probes = {};
    for (const c of allContainers(pod)) if (c.state === "running") probes[c.name] = verdictsOf(pass.probes.results, c.containerId);
  }
  return { pod, sandbox, backoff: { settings: ctx.backoff.settings, entries }, now: ctx.clock.now(), ...(probes && { probes }) };
}

/** A pod that is wanted: its sandbox, its containers started in order, its probes acted on, its stops moved along. */
export async function syncRunning(pass: PodPass, pod: PodRecord): Promise<void> {
  const { ctx } = pass;
  let sandbox: SandboxView = pod.sandbox ? "ready" : "missing";
  if (pod.sandbox && pass.sandboxSuspects.delete(pod.spec.key)) {
    try {
      sandbox = await checkSandbox(ctx, pod);
    } catch (error) {
      pass.sandboxSuspects.add(pod.spec.key);
      throw error;
    }
  }
  enforceActiveDeadline(ctx, pod);
  // The hooks' outcomes are part of what the pass found (an evicted pod's hooks are dropped by its stops).
  if (!pod.evicted) takePostStartOutcomes(ctx, pod);
  const actions = computePodActions(actionsInput(pass, pod, sandbox));

  if (sandbox === "replaced") ctx.event(pod, "Normal", "SandboxChanged", undefined, "Pod sandbox changed, it will be killed and re-created.");
  if (actions.resetInit) resetInit(pod, actions.resetInit);
  for (const kill of actions.containersToKill) {
    if (kill.reason === "sandboxChanged" || kill.reason === "sandboxDied") await killStranded(ctx, pod, kill.name, kill.message);
  }
  if (actions.createSandbox) {
    try {
      const { warnings, ...created } = await ctx.runtime.runPodSandbox(pod.spec);
      pod.sandbox = created;
      ctx.track(created.id, pod);
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
  for (const kill of actions.containersToKill) stop(ctx, pod, kill);
  await applyResizes(ctx, pod, actions.containersToResize);
  if (!actions.startsHeldBy) {
    for (const name of actions.backOffsToForget) ctx.backoff.forget(backoffKey(pod.spec.uid, name));
    await carryOutStarts(ctx, pod, actions);
    // A container that could not start may have met a dead sandbox (a pause container's
    // namespaces cannot be joined once it is gone): look at the sandbox on the next pass.
    if (allContainers(pod).some((c) => c.state === "terminated" && c.terminated.containerId === "")) pass.sandboxSuspects.add(pod.spec.key);
  }
  if (terminationRequested(pod)) return;
  // Decided again on what the starts left: a start may have ended the pod, a new attempt is probed.
  const finished = isTerminalPhase(podPhase(pod));
  const probes = finished ? undefined : pass.probes;
  if (probes) for (const container of allContainers(pod)) watchProbes(pod, container, probes);
  const after = computeAfterStartActions(actionsInput({ ...pass, probes }, pod, "ready"));
  for (const kill of after.containersToKill) stop(ctx, pod, kill);
  for (const outcome of after.probes) {
    const container = byName(pod, outcome.name);
    if (container) applyProbeOutcome(ctx, pod, container, outcome);
  }
  if (probes) for (const container of allContainers(pod)) keepProbeCounters(container, probes);
  for (const container of allContainers(pod)) await advanceStop(ctx, pod, container);
  // Each start writes them first; this keeps them current once the labels or annotations change.
  syncPodVolumes(ctx, pod, true);
  // A first start this pass gave the pod its start time, from which its deadline counts.
  if (enforceActiveDeadline(ctx, pod)) ctx.requestSync(pod);
}

/** A pod going away: its containers stopped (sidecars last, in reverse order); true once none runs. */
export async function syncTerminating(pass: PodPass, pod: PodRecord): Promise<boolean> {
  const { ctx } = pass;
  const actions = computePodActions(actionsInput({ ...pass, probes: undefined }, pod, pod.sandbox ? "ready" : "missing"));
  for (const kill of actions.containersToKill) stop(ctx, pod, kill);
  for (const container of allContainers(pod)) await advanceStop(ctx, pod, container);
  return !allContainers(pod).some((c) => c.state === "running");
}

function byName(pod: PodRecord, name: string): ContainerRecord | undefined {
  return allContainers(pod).find((c) => c.name === name);
}

/** Begins a planned stop (a stranded container was killed before, at once). */
function stop(ctx: SyncContext, pod: PodRecord, kill: ContainerToKill): void {
  if (kill.reason === "sandboxChanged" || kill.reason === "sandboxDied") return;
  const container = byName(pod, kill.name);
  if (container) beginStop(ctx, pod, container, kill.reason, kill.graceMs, kill.message);
}

/**
 * The planned starts in order, each going ahead only while the pod is not asked to go and the
 * start before it let it (its gate): ephemeral containers, the init containers, then, once they
 * are all through, the app containers.
 */
async function carryOutStarts(ctx: SyncContext, pod: PodRecord, actions: ReturnType<typeof computePodActions>): Promise<void> {
  for (const start of actions.ephemeralContainersToStart) {
    if (terminationRequested(pod)) return;
    await carryOutStart(ctx, pod, start);
  }
  for (const start of actions.initContainersToStart) {
    // Each start may take long (a spawn, a pull): a pod asked to go meanwhile starts nothing more.
    if (terminationRequested(pod)) return;
    if (!(await carryOutStart(ctx, pod, start))) return;
  }
  if (actions.initFailed) pod.initFailed = true;
  if (!actions.initialized || terminationRequested(pod)) return;
  pod.initialized = true;
  for (const start of actions.containersToStart) {
    if (terminationRequested(pod)) return;
    if (!(await carryOutStart(ctx, pod, start))) return;
  }
}

/** Starts (or backs off) one container; true when the pass may go on to the next start. */
async function carryOutStart(ctx: SyncContext, pod: PodRecord, start: ContainerToStart): Promise<boolean> {
  const container = byName(pod, start.name);
  if (!container) return false;
  await startPlanned(ctx, pod, container, start.backOff);
  return gateHolds(start.then, container);
}

function gateHolds(gate: StartGate, container: ContainerRecord): boolean {
  switch (gate) {
    case "continue":
      return true;
    case "untilHook":
      return !postStartRunning(container);
    case "untilStarted":
      return !postStartRunning(container) && container.state === "running" && container.started;
    case "last":
      return false;
  }
}

/** Takes the postStart hooks' outcomes: a failed one has its container killed by the plan (`FailedPostStartHook`). */
function takePostStartOutcomes(ctx: SyncContext, pod: PodRecord): void {
  for (const container of allContainers(pod)) applyPostStart(ctx, pod, container);
}

/** Keeps a running attempt probed; an attempt being stopped, or whose postStart hook runs, is not. */
function watchProbes(pod: PodRecord, container: ContainerRecord, probes: ProbeDriver): void {
  if (container.state !== "running" || postStartRunning(container)) return;
  const id = container.containerId;
  if (container.stopping) return probes.forget(id);
  probes.probe({ podKey: pod.spec.key, pod: { namespace: pod.spec.namespace, name: pod.spec.fullName, uid: pod.spec.uid }, containerId: id, container: container.spec, startedAt: container.startedAt, podIP: pod.sandbox?.ip ?? "127.0.0.1", saved: container.probeCounters });
}

/** After the verdicts were acted on: an attempt now stopping is forgotten by the prober, the others' counters checkpointed. */
function keepProbeCounters(container: ContainerRecord, probes: ProbeDriver): void {
  if (container.state !== "running" || postStartRunning(container)) return;
  if (container.stopping) probes.forget(container.containerId);
  else container.probeCounters = probes.counters(container.containerId);
}
