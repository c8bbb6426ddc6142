/**
 * Starting, back-off and noticing exits for one container: the part of syncPod that asks the
 * runtime to create something, and the part that reads back what happened to it.
 */
import type { MetricContainerType } from "../stats/kubelet-metrics.ts";
import { ContainerStartError, ImagePullError, type ContainerStatus } from "../runtime/runtime.ts";
import { goDuration } from "../printers/go-duration.ts";
import type { ContainerSpec, EnvVar, ResourceRequirements } from "../manifest/types.ts";
import { allocatedResources } from "./pod-resize.ts";
import { backoffKey } from "./backoff.ts";
import { DownwardApiError, resolveEnv } from "./env/downward-values.ts";
import { ContainerConfigError, containerEnv } from "./env/container-env.ts";
import { requiresNonRoot, runAsNonRootRefusal } from "./run-as-non-root.ts";
import { syncPodVolumes } from "./volumes/pod-volumes.ts";
import { expandCommand, expandEnv } from "./env/env-expansion.ts";
import { allContainers, podFullDescription, transition, type ContainerRecord, type PodRecord, type Termination } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";
import { noticeRestartInPlace } from "./runtime-restarts.ts";
import { exitedSuffix, killCauseOf } from "./lifecycle/kill-cause.ts";
import { beginPostStart } from "./lifecycle/post-start.ts";
import { fallbackTerminationMessage } from "./termination-message.ts";
import { containerOomScoreAdj } from "./oom-score-adj.ts";

/** Reads a live container's status from the runtime and records an exit if there was one. */
export async function refreshContainer(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): Promise<void> {
  if (container.state !== "running" || !container.containerId) return;
  const status = await ctx.runtime.containerStatus(container.containerId);
  if (status.stopSignal) container.stopSignal = status.stopSignal;
  if (status.state === "exited" || status.state === "unknown") {
    const fromLog = await fallbackTerminationMessage(ctx.runtime, container.spec, status);
    recordExit(ctx, pod, container, fromLog === undefined ? status : { ...status, terminationMessage: fromLog });
  } else noticeRestartInPlace(ctx, pod, container, status);
}

export function recordExit(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, status: ContainerStatus): void {
  const termination = terminationOf(status, container.startedAt, ctx.clock.now());
  applyTermination(container, termination);
  const exit = exitEvent(container.name, termination);
  ctx.event(pod, exit.type, "Exited", container, exit.message);
}

/**
 * How an attempt ended, from the runtime's status: an id the runtime no longer knows is a lost
 * container (137, ContainerStatusUnknown), like the kubelet reports one. `now` stands in for a
 * finish time the runtime does not give.
 */
export function terminationOf(status: ContainerStatus, startedAt: number | undefined, now: number): Termination {
  const lost = status.state === "unknown";
  const exitCode = lost ? 137 : (status.exitCode ?? 0);
  const termination: Termination = {
    containerId: status.id,
    exitCode,
    reason: lost ? "ContainerStatusUnknown" : (status.reason ?? (exitCode === 0 ? "Completed" : "Error")),
    startedAt: status.startedAt ?? startedAt,
    finishedAt: status.finishedAt ?? now,
  };
  if (status.signal !== undefined) termination.signal = status.signal;
  if (lost) termination.message = "The container could not be located when the pod was synced";
  else if (status.terminationMessage) termination.message = status.terminationMessage;
  return termination;
}

/** The container's current attempt has ended as `termination` says; a stop under way gives its kill cause. */
export function applyTermination(container: ContainerRecord, termination: Termination): void {
  Object.assign(termination, killCauseOf(container.stopping, termination.reason));
  transition(container, { state: "terminated", terminated: termination, ready: false, started: false });
}

/** The `Exited` event's type and message for an ended attempt. */
export function exitEvent(container: string, termination: Termination): { type: "Normal" | "Warning"; message: string } {
  return {
    type: termination.exitCode === 0 ? "Normal" : "Warning",
    message: `Container ${container} exited with code ${termination.exitCode} (${termination.reason})${exitedSuffix(termination.killCause, termination.graceExpired === true)}`,
  };
}

/**
 * The longest the kubelet's pod worker leaves a pod whose sync met a back-off before syncing it
 * again (its resync interval, syncFrequency): it requeues the pod at the back-off's end, no later.
 */
const POD_WORKER_RESYNC_MS = 60_000;

/** A back-off the plan found still running (compute-pod-actions.ts): the start waits it out. */
export interface BackOffWait {
  /** The finish of the attempt the wait is measured from. */
  finishedAt: number;
  until: number;
  /** The wait, as the waiting message gives it. */
  delayMs: number;
  /** The first pass of this wait: the BackOff event is emitted. */
  announce: boolean;
}

/**
 * Carries out a planned start (compute-pod-actions.ts). A back-off the plan found is waited out:
 * its first pass keeps the exit as the container's state (one BackOff event per wait); the passes
 * after it make the ended attempt the last termination, the container waiting with reason
 * CrashLoopBackOff, and wake the pod at the wait's end. Otherwise the container is started and
 * the back-off advanced. The dead container the ended attempt replaces as the one kept is removed
 * after the start, as the kubelet's container GC removes it off the sync: the restart does not wait
 * for a directory, a cgroup and their files to go.
 */
export async function startPlanned(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, backOff: BackOffWait | undefined): Promise<void> {
  let replaced: string | undefined;
  try {
    if (container.attempts > 0) {
      if (backOff?.announce && container.state === "terminated" && !restartedInKillPass(container.terminated)) {
        // The kubelet's pass that meets the exit draws the pod's status before it tries the start; the
        // back-off that start meets (its BackOff event now) is shown from the next pass on (its
        // reasonCache), which its pod worker runs at the back-off's end, a resync interval at most. Till
        // then the status shows the exit (Error), or RunContainerError for a start that failed; the
        // ended attempt is still the current one (`logs --previous` reads the one before).
        container.backoffAnnouncedFor = backOff.finishedAt;
        ctx.event(pod, "Warning", "BackOff", container, backOffEventMessage(pod, container));
        if (container.terminated.containerId === "") showStartFailure(container, container.terminated);
        ctx.wakeAt(pod, Math.min(backOff.until, ctx.clock.now() + POD_WORKER_RESYNC_MS));
        return;
      }
      if (container.state === "terminated") {
        replaced = keepAsPrevious(ctx, container, container.terminated.containerId);
        container.lastTermination = container.terminated;
        transition(container, { state: "waiting", ready: false, started: false });
      }
      if (backOff) {
        container.waiting = {
          reason: "CrashLoopBackOff",
          message: `back-off ${goDuration(backOff.delayMs)} restarting failed container=${container.name} pod=${pod.spec.fullName}_${pod.spec.namespace}(${pod.spec.uid})`,
        };
        if (backOff.announce) {
          container.backoffAnnouncedFor = backOff.finishedAt;
          ctx.event(pod, "Warning", "BackOff", container, backOffEventMessage(pod, container));
        }
        ctx.wakeAt(pod, backOff.until);
        return;
      }
      ctx.backoff.next(backoffKey(pod.spec.uid, container.name), container.lastTermination?.finishedAt ?? ctx.clock.now());
    }
    await startContainer(ctx, pod, container);
  } finally {
    // No longer kept whether or not the start went through.
    if (replaced) await ctx.runtime.removeContainer(replaced).catch((error) => ctx.log(`removing ${replaced}: ${error}`));
  }
}

/**
 * A probe's kill or a changed definition: the kubelet starts the container again in the pass that
 * kills it, so the back-off is in its reasonCache before any status shows the exit.
 */
function restartedInKillPass(termination: Termination): boolean {
  return termination.killCause === "liveness" || termination.killCause === "startup" || termination.killCause === "changed";
}

/**
 * A start that failed (recordStartError) as the kubelet shows it while its reasonCache holds the
 * failure: waiting, with the failure's reason (a runtime's StartError is its RunContainerError),
 * the failed attempt as the last state.
 */
function showStartFailure(container: ContainerRecord, failed: Termination): void {
  container.lastTermination = failed;
  const waiting = transition(container, { state: "waiting", ready: false, started: false });
  waiting.waiting = { reason: failed.reason === "StartError" ? "RunContainerError" : failed.reason, ...(failed.message !== undefined && { message: failed.message }) };
}

function backOffEventMessage(pod: PodRecord, container: ContainerRecord): string {
  return `Back-off restarting failed container ${container.name} in pod ${pod.spec.fullName}`;
}

/**
 * Keeps one dead container per container (what `logs --previous` reads), like the kubelet's GC:
 * the one that just ended replaces the one kept before, which is returned for removal. A failed
 * start leaves no container, so then the kept one stays.
 */
function keepAsPrevious(ctx: SyncContext, container: ContainerRecord, ended: string | undefined): string | undefined {
  if (!ended || ended === container.previousContainerId) return undefined;
  const older = container.previousContainerId;
  container.previousContainerId = ended;
  if (!older) return undefined;
  ctx.untrack(older);
  return older;
}

async function startContainer(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): Promise<void> {
  if (!pod.sandbox) return;
  // The kubelet mounts a pod's volumes before any of its containers starts (FailedMount holds them back).
  if (!syncPodVolumes(ctx, pod)) return;
  if (!(await ensureImage(ctx, pod, container))) return;
  let spec: ContainerSpec;
  try {
    spec = runtimeSpec(ctx, pod, container);
  } catch (error) {
    if (error instanceof ContainerStartError) {
      // As a failed start (a downward reference the pod cannot satisfy): counted and recorded like one.
      ctx.metrics.containerStarted(metricContainerType(container.kind));
      ctx.metrics.containerStartFailed(metricContainerType(container.kind), "Unknown");
      recordStartError(ctx, pod, container, error);
      return;
    }
    if (!(error instanceof ContainerConfigError)) throw error;
    if (error.quietUntil !== undefined && error.quietUntil > ctx.clock.now()) {
      // The object is being read (the kubelet waits a second for its cache): its arrival wakes the pod.
      ctx.wakeAt(pod, error.quietUntil);
      return;
    }
    // The kubelet's ErrCreateContainerConfig: no attempt is made, the container waits; the object's arrival wakes the pod.
    container.waiting = { reason: "CreateContainerConfigError", message: error.message };
    ctx.event(pod, "Warning", "Failed", container, `Error: ${error.message}`);
    return;
  }
  const refusal = await nonRootRefusal(ctx, pod, container);
  if (refusal) {
    // generateContainerConfig's refusal: no attempt is made, the container waits as for a missing object.
    container.waiting = { reason: "CreateContainerConfigError", message: refusal };
    ctx.event(pod, "Warning", "Failed", container, `Error: ${refusal}`);
    return;
  }
  const attempt = container.attempts;
  let id: string;
  const metricType = metricContainerType(container.kind);
  // Counted before the call, as the kubelet counts every start it asks for; a failure is counted again as an error.
  ctx.metrics.containerStarted(metricType);
  try {
    const target = container.spec.targetContainerName;
    const targetContainerId = target === undefined ? undefined : allContainers(pod).find((c) => c.name === target && c.state === "running")?.containerId;
    const oomScoreAdj = ctx.oomScores && containerOomScoreAdj(pod.spec, spec, ctx.oomScores);
    id = await ctx.runtime.startContainer({
      pod: pod.spec,
      container: spec,
      kind: container.kind,
      attempt,
      sandbox: pod.sandbox,
      ...(targetContainerId && { targetContainerId }),
      ...(oomScoreAdj !== undefined && { oomScoreAdj }),
    });
  } catch (error) {
    // No gRPC status here: every runtime failure is the CRI's Unknown.
    ctx.metrics.containerStartFailed(metricType, "Unknown");
    if (!(error instanceof ContainerStartError)) throw error;
    recordStartError(ctx, pod, container, error);
    return;
  }
  const now = ctx.clock.now();
  beginAttempt(container, attempt, id, now);
  pod.startTime ??= now;
  ctx.track(id, pod);
  ctx.event(pod, "Normal", "Created", container, `Created container: ${container.name}`);
  ctx.event(pod, "Normal", "Started", container, `Started container ${container.name}`);
  const unenforced = ctx.runtime.unenforcedLimits?.(id);
  if (unenforced) ctx.event(pod, "Warning", "LimitsNotEnforced", container, `Resource limits of container ${container.name} are not enforced: ${unenforced}`);
  const unmounted = ctx.runtime.unhonouredMounts?.(id);
  if (unmounted) ctx.event(pod, "Warning", "VolumeMountsNotHonoured", container, `Volumes of container ${container.name} are not at their mountPath: ${unmounted}`);
  const noTerminationFile = attempt === 0 ? ctx.runtime.unhonouredTerminationMessagePath?.(spec) : undefined;
  if (noTerminationFile) ctx.event(pod, "Warning", "TerminationMessagePathNotHonoured", container, `terminationMessagePath of container ${container.name} is not honoured: ${noTerminationFile}`);
  beginPostStart(ctx, pod, container);
}

/** runAsNonRoot's verdict on the user the container would run as (run-as-non-root.ts); a runtime that cannot tell its image's user is not checked. */
async function nonRootRefusal(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): Promise<string | undefined> {
  if (!requiresNonRoot(pod.spec, container.name) || !ctx.runtime.imageUser) return undefined;
  try {
    const user = await ctx.runtime.imageUser(container.spec.image);
    return runAsNonRootRefusal(pod.spec, container.name, user, podFullDescription(pod));
  } catch (error) {
    // getImageUser's failure fails the config as the check's would.
    return (error as Error).message;
  }
}

/**
 * The spec the runtime is given, as the kubelet's makeEnvironmentVariables and
 * ExpandContainerCommandAndArgs make it at each start: env's `valueFrom` resolved (the pod IP the
 * sandbox's, which docker knows only once it runs), `$(VAR)` references in env values, command and
 * args expanded.
 */
function runtimeSpec(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): ContainerSpec {
  const spec = withResources(container.spec, allocatedResources(pod, container));
  const hasReference = (text: string) => text.includes("$");
  const withObjects = ctx.objects !== undefined || spec.envFrom !== undefined;
  if (!withObjects && !spec.env.some((env) => env.valueFrom || hasReference(env.value)) && ![...spec.command, ...spec.args].some(hasReference)) return spec;
  const facts = { podIP: pod.sandbox?.ip, createdAt: pod.createdAt, allocatable: ctx.allocatable };
  let env: EnvVar[];
  try {
    // With a source of objects, the kubelet's whole makeEnvironmentVariables (envFrom, object keys, services).
    env = withObjects ? containerEnv(pod.spec, spec, facts, ctx.objects) : expandEnv(resolveEnv(pod.spec, spec, facts), spec.env);
  } catch (error) {
    if (!(error instanceof DownwardApiError)) throw error;
    throw new ContainerStartError(spec.name, error.message, "CreateContainerConfigError", { cause: error });
  }
  return { ...spec, env, ...expandCommand(spec, env) };
}

/** The container as the node allocated it: a resize that waits has not given it the spec's resources. */
function withResources(spec: ContainerSpec, resources: ResourceRequirements | undefined): ContainerSpec {
  if (resources === spec.resources) return spec;
  const { resources: _desired, ...rest } = spec;
  return resources ? { ...rest, resources } : rest;
}

function metricContainerType(kind: ContainerRecord["kind"]): MetricContainerType {
  if (kind === "init" || kind === "sidecar") return "init_container";
  return kind === "ephemeral" ? "ephemeral_container" : "container";
}

/** Attempt number `attempt` runs as `id`: the restart count is the attempt, probes start over. */
export function beginAttempt(container: ContainerRecord, attempt: number, id: string, startedAt: number): void {
  const started = !container.spec.startupProbe;
  transition(container, { state: "running", containerId: id, startedAt, started, ready: started && !container.spec.readinessProbe });
  container.attempts = attempt + 1;
  // The new attempt runs the definition it was started with, and its own stop signal once the runtime reports it.
  delete container.definitionChanged;
  delete container.stopSignal;
  delete container.actuated;
}

function recordStartError(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, error: ContainerStartError): void {
  const now = ctx.clock.now();
  container.attempts += 1;
  if (container.state === "terminated") container.lastTermination = container.terminated;
  const terminated: Termination = { containerId: "", exitCode: 128, reason: error.reason, message: error.message, startedAt: now, finishedAt: now };
  transition(container, { state: "terminated", terminated, ready: false, started: false });
  ctx.event(pod, "Warning", "Failed", container, `Error: ${error.message}`);
  // Nothing will exit to wake us: ask for the pass that applies the restart policy and back-off.
  ctx.wakeAt(pod, now);
}

/** Applies the pull policy with its own back-off; false while the image is not there. */
async function ensureImage(ctx: SyncContext, pod: PodRecord, container: ContainerRecord): Promise<boolean> {
  const image = container.spec.image;
  const key = `${backoffKey(pod.spec.uid, container.name)}/pull`;
  const failedAt = ctx.pullBackoff.get(key)?.updatedAt;
  if (failedAt !== undefined) {
    const remaining = ctx.pullBackoff.remainingMs(key, failedAt);
    if (remaining > 0) {
      if (container.waiting?.reason !== "ImagePullBackOff") {
        ctx.event(pod, "Normal", "BackOff", container, `Back-off pulling image "${image}"`);
      }
      container.waiting = { reason: "ImagePullBackOff", message: `Back-off pulling image "${image}"` };
      ctx.wakeAt(pod, ctx.clock.now() + remaining);
      return false;
    }
  }
  const willPull = container.spec.imagePullPolicy === "Always";
  if (willPull && ctx.runtime.name === "docker") ctx.event(pod, "Normal", "Pulling", container, `Pulling image "${image}"`);
  try {
    const result = await ctx.runtime.ensureImage(container.spec, (line) => ctx.log(`${pod.spec.fullName} ${container.name}: ${line}`));
    if (result.pulled) {
      if (!willPull) ctx.event(pod, "Normal", "Pulling", container, `Pulling image "${image}"`);
      const size = result.sizeBytes !== undefined ? ` Image size: ${result.sizeBytes} bytes.` : "";
      ctx.event(pod, "Normal", "Pulled", container, `Successfully pulled image "${image}" in ${goDuration(result.durationMs)}.${size}`);
    } else if (ctx.runtime.name === "docker") {
      ctx.event(pod, "Normal", "Pulled", container, `Container image "${image}" already present on machine`);
    }
    ctx.pullBackoff.forget(key);
    return true;
  } catch (error) {
    if (!(error instanceof ImagePullError)) throw error;
    ctx.pullBackoff.next(key, ctx.clock.now());
    container.waiting = { reason: error.reason, message: error.message };
    ctx.event(pod, "Warning", "Failed", container, error.reason === "ErrImageNeverPull"
      ? `Container image "${image}" is not present with pull policy of Never`
      : `Failed to pull image "${image}": ${error.message}`);
    ctx.event(pod, "Warning", "Failed", container, `Error: ${error.reason}`);
    // Like the kubelet's worker re-syncing a pod whose sync failed: the next pass finds the image in
    // back-off and shows ImagePullBackOff for the rest of the wait (waking again at its end).
    if (error.reason === "ErrImagePull") ctx.wakeAt(pod, ctx.clock.now());
    return false;
  }
}
