/**
 * What one pass is to do for a pod, decided without doing any of it: the kubelet's
 * computePodActions (pkg/kubelet/kuberuntime/kuberuntime_manager.go), which SyncPod then carries
 * out (pod-actions.ts here). The input is plain data: the pod as the loop knows it (its spec and
 * its containers as the runtime was last seen, the PLEG's view), what became of its sandbox, the
 * probes' verdicts, the back-off entries and the time. The output is a plan: the sandbox to create,
 * the containers to kill with their reasons and the kubelet's messages, the containers to start in
 * order (each with the back-off wait it must sit out instead, if any), and what the probes' verdicts
 * change once the starts are done. No await, no runtime, no store, no clock in here.
 */
import type { ProbeKind, ResourceRequirements } from "../manifest/types.ts";
import { loweredMemoryLimit, pendingActuation, resizeNeedsRestart } from "./pod-resize.ts";
import type { ProbeVerdict } from "../prober/tracker.ts";
import { backoffForgotten, type BackoffEntry, type BackoffSettings } from "./backoff.ts";
import type { BackOffWait } from "./container-lifecycle.ts";
import { IMMEDIATE_EVICTION_GRACE_MS } from "../eviction/pod-eviction.ts";
import type { StopCause } from "./lifecycle/kill-cause.ts";
import { isTerminalPhase, podPhase } from "./status/phase.ts";
import { allContainers, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import { postStartFailed, postStartRunning } from "./lifecycle/post-start.ts";
import { containerShouldRestart, isContainerRestartable } from "./restart-policy.ts";
import { killingMessage, remainingPodGraceMs } from "./lifecycle/termination.ts";

/**
 * The sandbox as the pass found it. `missing`: none yet (or its creation failed). `replaced`: the
 * runtime found it dead and made a new one (runPodSandbox). `died`: dead, and the pod must not
 * restart, so no new one was asked for (sandboxNeedsReplacing).
 */
export type SandboxView = "ready" | "missing" | "replaced" | "died";

/** The probes' verdicts on a container's current attempt; absent: not known (no such probe, or not probed yet). */
export type ProbeVerdicts = Partial<Record<ProbeKind, ProbeVerdict>>;

export interface PodActionsInput {
  /** The pod's spec and its containers' records, as the runtime was last seen (read, never changed). */
  pod: PodRecord;
  sandbox: SandboxView;
  /** The verdicts of each probed container, by name; undefined when the loop runs no prober. */
  probes?: Readonly<Record<string, ProbeVerdicts>>;
  /** The restart back-off: its curve, and the pod's entries by container name. */
  backoff: { settings: BackoffSettings; entries: Readonly<Record<string, Pick<BackoffEntry, "delayMs" | "updatedAt">>> };
  now: number;
}

/** Why a container is killed: a stop (kill-cause.ts), or a sandbox gone under it (killed at once, no grace). */
export type KillReason = StopCause | "sandboxChanged" | "sandboxDied";

export interface ContainerToKill {
  name: string;
  reason: KillReason;
  /** The Killing event's message, in the kubelet's words. */
  message: string;
  /** The grace the stop gets (0 for a sandbox's stranded containers: SIGKILL at once). */
  graceMs: number;
}

/** A container that waits out its back-off instead of starting (CrashLoopBackOff): until when, from which finish, the wait, announced or not. */
export type BackOff = BackOffWait;

/**
 * What must hold once a start is done for the pass to go on to the next: `continue` whatever
 * happened (ephemeral), `untilHook` unless its postStart hook runs (the kubelet's worker is held
 * inside the start meanwhile), `untilStarted` unless it runs and counts as started (a sidecar
 * before the pod is initialized), `last` never (a regular init container runs alone).
 */
export type StartGate = "continue" | "untilHook" | "untilStarted" | "last";

export interface ContainerToStart {
  name: string;
  kind: ContainerRecord["kind"];
  /** Set: not started this pass, the wait is shown instead and a wake-up armed for its end. */
  backOff?: BackOff;
  then: StartGate;
}

/** What the probes' verdicts change on one running attempt, in container order. */
export interface ProbeOutcome {
  name: string;
  /** The startup probe succeeded: the container counts as started (a sidecar lets the next one start). */
  started?: true;
  /** The readiness to set (only when it changes). */
  ready?: boolean;
  /** A startup or liveness failure: the container is stopped, its restart policy takes it from there. */
  kill?: ContainerToKill & { reason: StopCause };
}

export interface PodActions {
  /** The pod is going away: its containers are stopped in the kubelet's order, nothing starts. */
  killPod: boolean;
  createSandbox: boolean;
  /**
   * The sandbox was replaced and the pod has init containers: it is not initialized any more, and
   * these ones, which ran in the old sandbox, wait to run again.
   */
  resetInit?: string[];
  /** Kills before any start, in order: stranded containers, an eviction, a failed postStart hook, a changed definition, a pod going away. */
  containersToKill: ContainerToKill[];
  /** Containers whose back-off is forgotten before they start: their definition changed (the kubelet's back-off key holds the hash). */
  backOffsToForget: string[];
  /** When none of the following starts may happen: a postStart hook runs, or the pod has finished. */
  startsHeldBy?: "postStartHook" | "podFinished";
  ephemeralContainersToStart: ContainerToStart[];
  initContainersToStart: ContainerToStart[];
  /** An init container failed for good: the pod is Failed. */
  initFailed: boolean;
  /** Every init container is done once the init starts went through: the app containers follow. */
  initialized: boolean;
  containersToStart: ContainerToStart[];
  /** Running containers given their new cpu and memory in place (an accepted resize), before the starts. */
  containersToResize: ContainerToResize[];
  /**
   * Once the starts are done: a finished pod's next sidecar stopped, or the probes' verdicts on
   * the running attempts. (The executor decides this part again on the state the starts left.)
   */
  afterStarts: AfterStartActions;
}

export interface ContainerToResize {
  name: string;
  /** The allocation to apply. */
  resources: ResourceRequirements | undefined;
  /** The memory limit it lowers (or sets), in bytes: the container's usage must be below it first. */
  lowersMemoryLimitTo?: bigint;
}

export interface AfterStartActions {
  containersToKill: ContainerToKill[];
  probes: ProbeOutcome[];
}

export function computePodActions(input: PodActionsInput): PodActions {
  const { pod, now } = input;
  const actions: PodActions = {
    killPod: false,
    createSandbox: false,
    containersToKill: [],
    backOffsToForget: [],
    ephemeralContainersToStart: [],
    initContainersToStart: [],
    initFailed: false,
    initialized: false,
    containersToStart: [],
    containersToResize: [],
    afterStarts: { containersToKill: [], probes: [] },
  };
  if (pod.deletionRequestedAt !== undefined) {
    actions.killPod = true;
    actions.containersToKill = terminationKills(pod, pod.deletionCause ?? "removed", remainingPodGraceMs(pod, now));
    return actions;
  }
  const kills = new Killing(pod, actions.containersToKill);
  actions.createSandbox = input.sandbox === "missing";
  let view = pod;
  if (input.sandbox === "replaced" || input.sandbox === "died") {
    const why = input.sandbox === "replaced" ? "its pod sandbox changed" : "its pod sandbox died and restartPolicy is Never";
    for (const c of allContainers(pod)) {
      if (c.state === "running") kills.add(c, input.sandbox === "replaced" ? "sandboxChanged" : "sandboxDied", 0, `Stopping container ${c.name}: ${why}`);
    }
  }
  if (input.sandbox === "replaced" && pod.init.some((c) => c.kind === "init")) {
    view = withInitReset(pod);
    actions.resetInit = pod.init.filter((c) => c.kind === "init" && c.state === "terminated").map((c) => c.name);
  }
  if (pod.evicted) for (const c of allContainers(pod)) kills.stop(c, "evicted", pod.evicted.graceMs ?? IMMEDIATE_EVICTION_GRACE_MS);
  for (const c of allContainers(pod)) if (postStartFailed(c) !== undefined) kills.stop(c, "postStart", pod.spec.terminationGracePeriodSeconds * 1000);

  const finished = isTerminalPhase(podPhase(view));
  if (finished || allContainers(view).some(postStartRunning)) {
    actions.startsHeldBy = finished ? "podFinished" : "postStartHook";
  } else {
    for (const c of allContainers(view)) {
      if (!c.definitionChanged) continue;
      if (c.state === "running") kills.stop(c, "changed", pod.spec.terminationGracePeriodSeconds * 1000);
      else actions.backOffsToForget.push(c.name);
    }
    // computePodResizeAction: an accepted resize not yet applied, by a restart where the resizePolicy asks for one.
    for (const c of allContainers(view)) {
      const pending = c.stopping ? undefined : pendingActuation(pod, c);
      if (!pending) continue;
      if (resizeNeedsRestart(c, pending.actuated, pending.target)) {
        kills.stop(c, "resize", pod.spec.terminationGracePeriodSeconds * 1000);
        continue;
      }
      const lowersMemoryLimitTo = loweredMemoryLimit(pending.actuated, pending.target);
      actions.containersToResize.push({ name: c.name, resources: pending.target, ...(lowersMemoryLimitTo !== undefined && { lowersMemoryLimitTo }) });
    }
    const start = (c: ContainerRecord, then: StartGate): ContainerToStart => {
      const backOff = actions.backOffsToForget.includes(c.name) ? undefined : backOffOf(input, c);
      return { name: c.name, kind: c.kind, then, ...(backOff && { backOff }) };
    };
    for (const c of view.ephemeral ?? []) if (c.attempts === 0) actions.ephemeralContainersToStart.push(start(c, "continue"));
    const init = planInit(view, start);
    actions.initContainersToStart = init.starts;
    actions.initFailed = init.failed;
    actions.initialized = init.done;
    if (init.done) actions.containersToStart = planApps(view, start);
  }
  // A stranded container is only signalled: the prober goes on with it until its exit is seen.
  const stops = actions.containersToKill.filter((k) => k.reason !== "sandboxChanged" && k.reason !== "sandboxDied");
  actions.afterStarts = computeAfterStartActions({ ...input, pod: view }, stops);
  return actions;
}

/**
 * The part of the plan that comes once the starts are done, on the state they left: a finished
 * pod stops its sidecars (last declared first, KEP-753); else the probes' verdicts are acted on.
 * `killed`: containers the plan already stops, which are not probed any more.
 */
export function computeAfterStartActions(input: PodActionsInput, killed: readonly ContainerToKill[] = []): AfterStartActions {
  const { pod, now } = input;
  const after: AfterStartActions = { containersToKill: [], probes: [] };
  const stopping = new Set(killed.map((k) => k.name));
  if (isTerminalPhase(podPhase(pod))) {
    const sidecar = nextSidecarToStop(pod);
    if (sidecar && !stopping.has(sidecar.name)) after.containersToKill.push(kill(pod, sidecar, "completed", remainingPodGraceMs(pod, now)));
    return after;
  }
  if (!input.probes) return after;
  for (const c of allContainers(pod)) {
    if (!probed(c) || stopping.has(c.name)) continue;
    const outcome = probeOutcome(pod, c, input.probes[c.name] ?? {});
    if (outcome) after.probes.push(outcome);
  }
  return after;
}

/** The attempts the prober looks at: running, not being stopped, not held by a postStart hook. */
function probed(c: ContainerRecord): c is Extract<ContainerRecord, { state: "running" }> {
  return c.state === "running" && !c.stopping && !postStartRunning(c);
}

/**
 * Whether a pod's dead sandbox is replaced: not for a pod that must not restart (Never, and no app
 * container whose own policy or rules could restart it) once something of it ran; what ran in the
 * dead one is stopped and the pod finishes with what it has, as computePodActions decides.
 */
export function sandboxNeedsReplacing(pod: PodRecord): boolean {
  const runOnce = pod.spec.restartPolicy === "Never" && !pod.app.some((c) => isContainerRestartable(pod.spec.restartPolicy, c));
  return !(runOnce && allContainers(pod).some((c) => c.attempts > 0));
}

/** A going-away pod's stops: every running container but the sidecars, and once none runs, the last sidecar still running. */
function terminationKills(pod: PodRecord, cause: NonNullable<PodRecord["deletionCause"]>, graceMs: number): ContainerToKill[] {
  const mains = allContainers(pod).filter((c) => c.kind !== "sidecar" && c.state === "running");
  if (mains.length > 0) return mains.filter((c) => !c.stopping).map((c) => kill(pod, c, cause, graceMs));
  const sidecar = nextSidecarToStop(pod);
  return sidecar ? [kill(pod, sidecar, cause, graceMs)] : [];
}

/** Sidecars stop in reverse order of declaration, each after the later ones have exited, and only once no app container runs. */
function nextSidecarToStop(pod: PodRecord): ContainerRecord | undefined {
  if (pod.app.some((c) => c.state === "running")) return undefined;
  const running = pod.init.filter((c) => c.kind === "sidecar" && c.state === "running");
  const last = running[running.length - 1];
  return last && !last.stopping ? last : undefined;
}

function kill(pod: PodRecord, c: ContainerRecord, reason: StopCause, graceMs: number): ContainerToKill & { reason: StopCause } {
  return { name: c.name, reason, message: killingMessage(pod, c, reason), graceMs };
}

/** The plan's kills, each container once, as a stop already under way is left alone. */
class Killing {
  private readonly names = new Set<string>();
  constructor(
    private readonly pod: PodRecord,
    private readonly list: ContainerToKill[],
  ) {}

  stop(c: ContainerRecord, reason: StopCause, graceMs: number): void {
    if (c.state !== "running" || c.stopping || this.names.has(c.name)) return;
    this.names.add(c.name);
    this.list.push(kill(this.pod, c, reason, graceMs));
  }

  /** A stranded container: killed whatever stop is under way. */
  add(c: ContainerRecord, reason: KillReason, graceMs: number, message: string): void {
    this.list.push({ name: c.name, reason, message, graceMs });
  }
}

/** The pod as its new sandbox sees it: init containers that ran are waiting to run again. */
function withInitReset(pod: PodRecord): PodRecord {
  const init = pod.init.map((c): ContainerRecord => {
    if (c.kind !== "init" || c.state !== "terminated") return c;
    const { terminated, ready: _ready, started: _started, state: _state, ...rest } = c;
    return { ...rest, lastTermination: terminated, state: "waiting", waiting: { reason: "PodInitializing" }, ready: false, started: false };
  });
  return { ...pod, init, initialized: false };
}

/** The back-off a crashed container must sit out before its next start, if any is left. */
function backOffOf(input: PodActionsInput, c: ContainerRecord): BackOff | undefined {
  if (c.attempts === 0) return undefined;
  const { now, backoff } = input;
  const finishedAt = (c.terminated ?? c.lastTermination)?.finishedAt ?? now;
  const entry = backoff.entries[c.name];
  if (!entry || backoffForgotten(entry, finishedAt, backoff.settings)) return undefined;
  const remaining = Math.max(0, finishedAt + entry.delayMs - now);
  if (remaining <= 0) {
    // The status still shows the exit (or failed start) the wait began with: the kubelet's pass at
    // the wait's end draws the CrashLoopBackOff its reasonCache holds before it restarts, so one
    // pass shows it.
    if (c.backoffAnnouncedFor === finishedAt && !crashLoopShown(c)) return { finishedAt, until: now, delayMs: entry.delayMs, announce: false };
    return undefined;
  }
  return {
    finishedAt,
    until: now + remaining,
    delayMs: entry.delayMs,
    announce: c.backoffAnnouncedFor !== finishedAt,
  };
}

function crashLoopShown(c: ContainerRecord): boolean {
  return c.state === "waiting" && c.waiting?.reason === "CrashLoopBackOff";
}

/**
 * Init containers one at a time; sidecars let the next one start once they have started. `done`:
 * every init container is through (given the starts' gates hold), so the app containers start.
 */
function planInit(pod: PodRecord, start: (c: ContainerRecord, then: StartGate) => ContainerToStart): { starts: ContainerToStart[]; failed: boolean; done: boolean } {
  const starts: ContainerToStart[] = [];
  const stop = (failed = false) => ({ starts, failed, done: false });
  if (pod.initFailed) return stop();
  for (const c of pod.init) {
    if (c.kind === "sidecar") {
      if (c.state !== "running") {
        const next = start(c, pod.initialized ? "untilHook" : "untilStarted");
        starts.push(next);
        // Waiting out its back-off, it does not run: only a pod initialized before goes on.
        if (next.backOff && !pod.initialized) return stop();
        continue;
      }
      if (postStartRunning(c)) return stop();
      if (pod.initialized || c.started) continue;
      return stop();
    }
    if (pod.initialized) continue;
    if (c.state === "terminated" && c.terminated.exitCode === 0) continue;
    if (c.state === "running") return stop();
    const lastExit = (c.terminated ?? c.lastTermination)?.exitCode;
    if (c.attempts > 0 && lastExit !== undefined && lastExit !== 0 && !containerShouldRestart(pod.spec.restartPolicy, c, lastExit)) return stop(true);
    starts.push(start(c, "last"));
    return stop();
  }
  return { starts, failed: false, done: true };
}

/** App containers by the restart policy; a changed definition restarts whatever the policy, as the kubelet does. */
function planApps(pod: PodRecord, start: (c: ContainerRecord, then: StartGate) => ContainerToStart): ContainerToStart[] {
  const starts: ContainerToStart[] = [];
  for (const c of pod.app) {
    if (c.state === "running") continue;
    const last = c.terminated ?? c.lastTermination;
    // Stopped to take its new resources: started again whatever the policy, as the kubelet's resize does.
    const resized = last?.killCause === "resize";
    if (c.attempts > 0 && last && !c.definitionChanged && !resized && !containerShouldRestart(pod.spec.restartPolicy, c, last.exitCode)) continue;
    starts.push(start(c, "untilHook"));
  }
  return starts;
}

/**
 * What the verdicts ask of a running attempt: a startup or liveness failure stops it, a startup
 * success marks it started, readiness is its `ready`. A verdict not known yet changes nothing.
 */
function probeOutcome(pod: PodRecord, c: Extract<ContainerRecord, { state: "running" }>, verdicts: ProbeVerdicts): ProbeOutcome | undefined {
  const { startupProbe, livenessProbe, readinessProbe } = c.spec;
  const grace = (probe: { terminationGracePeriodSeconds?: number }) => (probe.terminationGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds) * 1000;
  const outcome: ProbeOutcome = { name: c.name };
  const result = () => (outcome.started || outcome.ready !== undefined || outcome.kill ? outcome : undefined);
  if (startupProbe && !c.started) {
    const verdict = verdicts.startup;
    if (verdict === "failure") return { name: c.name, kill: kill(pod, c, "startup", grace(startupProbe)) };
    if (verdict !== "success") return undefined;
    outcome.started = true;
  }
  if (livenessProbe && verdicts.liveness === "failure") {
    outcome.kill = kill(pod, c, "liveness", grace(livenessProbe));
    return outcome;
  }
  const readiness = readinessProbe ? verdicts.readiness : "success";
  if (readiness !== undefined && readiness !== "unknown" && c.ready !== (readiness === "success")) outcome.ready = readiness === "success";
  return result();
}
