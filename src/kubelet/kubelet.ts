/**
 * The sync loop. `sync(desired)` is level-triggered: it receives every wanted pod and reacts to the
 * difference with what it runs. Each pod is then synced by its own worker, in the kubelet's order:
 * sandbox, refresh from the runtime, termination if going away, init containers, app containers,
 * probes. The loop never sleeps: it wakes on runtime events, on timers it armed (back-off expiry,
 * grace deadlines, probe periods) and on the caller's periodic resync.
 */
import type { Clock } from "../clock.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import type { Runtime, RuntimeEvent } from "../runtime/runtime.ts";
import { BackoffStore, DEFAULT_BACKOFF, type BackoffEntry, type BackoffSettings } from "./backoff.ts";
import { refreshContainer, startOrBackOff } from "./container-lifecycle.ts";
import { EventRecorder, type EventType, type KubeEvent } from "../kube-event.ts";
import { isTerminalPhase, podPhase } from "./phase.ts";
import { allContainers, newPodRecord, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import { PodWorkers } from "./pod-workers.ts";
import { updateConditions } from "./pod-conditions.ts";
import { servedPod } from "./pod-status.ts";
import type { V1Pod } from "../status/v1.ts";
import { containerShouldRestart } from "./restart-policy.ts";
import type { SyncContext } from "./sync-context.ts";
import type { ProbeCounters, ProbeListener, ProbeTarget } from "../prober/probe-manager.ts";
import type { ProbeResults } from "../prober/results.ts";
import { applyProbeVerdicts } from "./probe-actions.ts";
import type { AdoptionPlan } from "./adoption.ts";
import { applyAdoption } from "./adoption-apply.ts";
import { advanceStop, beginStop, remainingPodGraceMs, shortenStop } from "./termination.ts";
import { killRevivedAttempts } from "./runtime-restarts.ts";
import { ensureSandboxAlive } from "./sandbox-check.ts";
import { EventedPleg } from "../pleg/evented-pleg.ts";
import type { PodLifecycleEvent, PodLifecycleEventGenerator } from "../pleg/pleg.ts";
import { WakeTimers } from "./wake-timers.ts";
import { applyInPlaceUpdate, inPlaceChanges, restartChangedContainers } from "./container-changes.ts";
import { SyncFailures } from "./sync-failures.ts";
import { PodCheckpoints, type PodStateSink } from "./pod-checkpoints.ts";
import { PodAdmission, type NodeConditions } from "./pod-admission.ts";
import type { PodRequests } from "./admission.ts";
import type { NodeAllocatable } from "../eviction/node-allocatable.ts";

export type { PodStateSink } from "./pod-checkpoints.ts";
export type { NodeConditions } from "./pod-admission.ts";

/**
 * The prober as the loop uses it (prober/probe-manager.ts): it probes the attempts the loop runs
 * and caches verdicts, which the loop reads and acts on (probe-actions.ts); it decides nothing.
 */
export interface ProbeDriver {
  readonly results: ProbeResults;
  /** Probes this running attempt (idempotent). */
  probe(target: ProbeTarget): void;
  /** Stops probing an attempt that is gone or stopping, dropping its verdicts and any run in flight. */
  forget(containerId: string): void;
  /** The attempt's probe counters, checkpointed with its record. */
  counters(containerId: string): ProbeCounters;
  listen(listener: ProbeListener): void;
  stop(): void;
}

export interface KubeletOptions {
  runtime: Runtime;
  clock: Clock;
  backoff?: BackoffSettings;
  recorder?: EventRecorder;
  store?: PodStateSink;
  probes?: ProbeDriver;
  log?: (message: string) => void;
  /**
   * Why a pod's manifest no longer yields it, for its PodRemoved event (`turned invalid`); the
   * default is that the file was removed. The source knows; the loop only sees the pod go.
   */
  removalReason?: (source: string) => string | undefined;
  /** What new pods are admitted against (node-allocatable.ts); without it every pod is admitted. */
  allocatable?: NodeAllocatable;
  /** The node's conditions: under DiskPressure new pods wait (call nodeConditionsChanged when it clears). */
  node?: NodeConditions;
  /**
   * Where the runtime's container events come from, routed to pods. Default: a PLEG over the
   * runtime's event stream alone (not started: no relist), which the loop's tests drive directly.
   */
  pleg?: PodLifecycleEventGenerator;
}

/** Hears each pod after its pass with the Pod the pass drew, and once more with `removed` when it is gone. */
export type PodListener = (pod: PodRecord, object: V1Pod, removed: boolean) => void;

export class Kubelet {
  readonly pods = new Map<PodKey, PodRecord>();
  readonly recorder: EventRecorder;
  readonly backoff: BackoffStore;
  private readonly pullBackoff: BackoffStore;
  private readonly runtime: Runtime;
  private readonly clock: Clock;
  private readonly probes?: ProbeDriver;
  private readonly log: (message: string) => void;
  private readonly removalReason: (source: string) => string | undefined;
  private readonly admission: PodAdmission;
  private readonly workers: PodWorkers;
  private readonly wakes: WakeTimers;
  private readonly checkpoints: PodCheckpoints;
  private readonly syncFailures = new SyncFailures();
  private readonly pleg: PodLifecycleEventGenerator;
  /** Tracked ids the runtime reported started; a pod's are consumed by its next sync (runtime-restarts.ts). */
  private readonly startedIds = new Set<string>();
  /** Pods whose sandbox may have died (an event about it, the runtime back from an outage). */
  private readonly sandboxSuspects = new Set<PodKey>();
  private readonly podListeners = new Set<PodListener>();
  /** The served Pod each live pod's last pass drew: the status file and the final table print these. */
  private readonly served = new Map<PodKey, V1Pod>();
  private readonly emptyWaiters: Array<() => void> = [];
  private unwatch?: () => void;
  /** Set by stop(): nothing may sync, signal or arm a timer any more, whatever completes late. */
  private stopped = false;
  private readonly ctx: SyncContext;

  constructor(options: KubeletOptions) {
    this.runtime = options.runtime;
    this.clock = options.clock;
    this.pleg = options.pleg ?? new EventedPleg({ runtime: this.runtime, clock: this.clock, log: options.log });
    this.checkpoints = new PodCheckpoints({
      store: options.store,
      removalFailed: (pod, error) => {
        const message = `error recording the removal of pod ${pod.spec.fullName}: ${errorMessage(error)}`;
        this.log(message);
        const event = this.newEvent(pod, "Warning", "FailedSync", undefined, message);
        this.recorder.emit(event);
        return event;
      },
    });
    this.probes = options.probes;
    this.probes?.listen({
      event: (target, type, reason, message) => {
        const pod = this.pods.get(target.podKey);
        if (!pod || this.stopped) return;
        this.event(pod, type, reason, allContainers(pod).find((c) => c.containerId === target.containerId), message);
      },
      // A pod whose pass failed waits for its retry: probes running on must not hammer a failing runtime.
      probed: (target) => {
        if (!this.syncFailures.failing(target.podKey)) this.requestSync(target.podKey);
      },
    });
    this.log = options.log ?? (() => {});
    this.removalReason = options.removalReason ?? (() => undefined);
    this.admission = new PodAdmission({
      allocatable: options.allocatable,
      node: options.node,
      pods: () => this.pods.values(),
      event: (pod, type, reason, message) => this.event(pod, type, reason, undefined, message),
    });
    this.recorder = options.recorder ?? new EventRecorder();
    const settings = options.backoff ?? DEFAULT_BACKOFF;
    this.backoff = new BackoffStore(this.clock, settings);
    this.pullBackoff = new BackoffStore(this.clock, settings);
    this.wakes = new WakeTimers(this.clock, (key) => this.requestSync(key));
    this.workers = new PodWorkers(
      (key) => this.syncPod(key),
      (key, error) => this.onSyncError(key, error),
    );
    this.ctx = {
      runtime: this.runtime,
      clock: this.clock,
      backoff: this.backoff,
      pullBackoff: this.pullBackoff,
      event: (pod, type, reason, container, message) => this.event(pod, type, reason, container, message),
      wakeAt: (pod, at) => this.wakeAt(pod.spec.key, at),
      requestSync: (pod) => this.dispatch(pod.spec.key),
      track: (id, pod) => {
        if (this.pleg.track(id, pod.spec.key, trackedKind(pod, id))) this.dispatch(pod.spec.key);
      },
      untrack: (id) => {
        this.pleg.untrack(id);
        this.startedIds.delete(id);
        this.probes?.forget(id);
      },
      log: this.log,
      stopped: () => this.stopped,
    };
  }

  /** Subscribes to runtime events so an exit wakes its pod at once. Idempotent. */
  start(): void {
    this.stopped = false;
    this.unwatch ??= this.pleg.watch((event) => this.onPlegEvent(event));
  }

  /**
   * Stops listening to the runtime and cancels every timer; containers are left as they are. A pass
   * already running finishes, but what completes afterwards (a probe, a preStop hook, a failed pass)
   * neither syncs, signals nor arms a timer again.
   */
  stop(): void {
    this.stopped = true;
    this.unwatch?.();
    this.unwatch = undefined;
    this.wakes.clear();
    this.probes?.stop();
  }

  /**
   * One level-triggered pass: creates new pods, replaces changed ones, stops removed ones, then
   * syncs every pod. Resolves once every pod worker is idle (tests await it; `run` need not).
   * Until `sourcesReady`, nothing is stopped: the agent cannot kill what it is about to adopt.
   */
  sync(desired: Map<PodKey, PodSpec>, options: { sourcesReady?: boolean } = {}): Promise<void> {
    if (this.stopped) return this.workers.idle();
    const now = this.clock.now();
    // Pods this set changes are synced first: a new pod's start must not wait behind every other pod's pass.
    const touched = new Set<PodKey>();
    // Read once per pass and grown as pods are admitted: a thousand new pods are not a thousand walks of every pod.
    let admitted: PodRequests[] | undefined;
    for (const [key, spec] of desired) {
      const pod = this.pods.get(key);
      if (!pod || pod.spec.configHash !== spec.configHash || pod.replacement || spec.api?.deletion) touched.add(key);
      if (spec.api?.deletion) {
        // Deleted through the API: stop it with the grace asked for; never start one being deleted.
        if (pod && pod.spec.uid === spec.uid) this.deleteApiPod(pod, spec.api.deletion);
        continue;
      }
      if (!pod) {
        this.pods.set(key, this.admit(spec, now, (admitted ??= this.admission.admittedNow())));
      } else if (pod.deletionRequestedAt === undefined) {
        const changed = pod.spec.configHash === spec.configHash ? undefined : inPlaceChanges(pod.spec, spec);
        if (changed) {
          applyInPlaceUpdate(pod, spec, changed);
        } else if (pod.spec.configHash !== spec.configHash) {
          pod.replacement = spec;
          this.requestDeletion(pod, "replaced");
        } else if (spec.api && pod.spec.uid === spec.uid) {
          // An API pod's hash covers its spec only: new labels or annotations are taken as they are.
          pod.spec = spec;
        } else if (pod.spec.source !== spec.source) {
          // Renamed, content unchanged: the same pod, keeping the uid its containers carry, now
          // read from the new file (the uid a file would give is a hash of its path too).
          pod.spec = { ...pod.spec, source: spec.source };
        }
      } else if (pod.deletionCause !== "shutdown" && (pod.replacement?.configHash !== spec.configHash || pod.replacement.source !== spec.source)) {
        // Wanted again (or changed again) while still stopping: run the newest spec afterwards.
        pod.replacement = spec;
      }
    }
    if (options.sourcesReady ?? true) {
      for (const [key, pod] of this.pods) {
        if (desired.has(key) || pod.deletionCause === "shutdown") continue;
        pod.replacement = undefined;
        this.requestDeletion(pod, "removed");
        touched.add(key);
      }
    }
    for (const key of touched) if (this.pods.has(key)) this.dispatch(key);
    // The others on the next turn: each pass reads the runtime before its first await, and a
    // thousand of those would come before the changed pods' next step (their spawn).
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      for (const key of this.pods.keys()) if (!touched.has(key)) this.dispatch(key);
      return this.workers.idle();
    });
  }

  /**
   * Takes over from a previous agent, before the first sync: the planned pod records become this
   * loop's (their running containers keep their ids), the back-off curves continue where they
   * were, and labelled containers that nothing explains are stopped and removed. Each adopted pod
   * is checkpointed as planned. Tracking an id here does not sync its pod for an event that came
   * before: the first `sync` after adoption syncs every pod.
   */
  async adopt(plan: AdoptionPlan, backoff: BackoffEntry[]): Promise<void> {
    this.backoff.restore(backoff);
    await applyAdoption(plan, {
      pods: this.pods,
      track: (id, pod) => void this.pleg.track(id, pod.spec.key, trackedKind(pod, id)),
      event: (pod, type, reason, container, message) => this.event(pod, type, reason, container, message),
      backoff: this.backoff,
      save: (pod) => {
        pod.phase = podPhase(pod);
        this.checkpoint(pod);
      },
      runtime: this.runtime,
      log: this.log,
    });
  }

  /** Stops every pod (preStop, SIGTERM, grace, SIGKILL) and resolves when all are gone. */
  async shutdown(): Promise<void> {
    // Nothing syncs after stop(): waiting for the pods to go would never end.
    if (this.stopped) return;
    for (const pod of this.pods.values()) {
      pod.replacement = undefined;
      this.requestDeletion(pod, "shutdown");
      this.dispatch(pod.spec.key);
    }
    if (this.pods.size === 0) return;
    await new Promise<void>((resolve) => this.emptyWaiters.push(resolve));
    await this.workers.idle();
  }

  /** Resolves once no pod sync is running or queued (timers may still be armed). */
  idle(): Promise<void> {
    return this.workers.idle();
  }

  /** Called with each pod after its sync, and with `removed` once it is gone. */
  onPodSynced(listener: PodListener): () => void {
    this.podListeners.add(listener);
    return () => this.podListeners.delete(listener);
  }

  /** The live pods as their last passes drew them. */
  servedPods(): V1Pod[] {
    return [...this.served.values()];
  }

  /** Re-runs a pod's sync now (used by a caller that knows something changed). */
  requestSync(key: PodKey): void {
    if (this.pods.has(key)) this.dispatch(key);
  }

  private dispatch(key: PodKey): void {
    if (!this.stopped) this.workers.dispatch(key);
  }

  private wakeAt(key: PodKey, at: number): void {
    if (!this.stopped) this.wakes.wakeAt(key, at);
  }

  /**
   * A delete through the API: the pod goes the way a removed file's pod goes, with the API's grace.
   * A second delete may shorten the grace of a pod already stopping (`--force --grace-period=0`).
   */
  private deleteApiPod(pod: PodRecord, deletion: { requestedAt: number; gracePeriodSeconds: number }): void {
    const graceSeconds = deletion.gracePeriodSeconds;
    if (pod.deletionRequestedAt === undefined) {
      pod.replacement = undefined;
      pod.deletionGraceSeconds = graceSeconds;
      // The time the API accepted the delete, which its answer reported: the served pod keeps it.
      this.requestDeletion(pod, "removed", deletion.requestedAt);
      return;
    }
    if (pod.deletionCause === "shutdown") return;
    // Deleted while being replaced by a newer spec: the replacement must not start afterwards.
    pod.replacement = undefined;
    pod.deletionCause = "removed";
    if (graceSeconds >= (pod.deletionGraceSeconds ?? pod.spec.terminationGracePeriodSeconds)) return;
    pod.deletionGraceSeconds = graceSeconds;
    for (const container of allContainers(pod)) shortenStop(this.ctx, pod, container, graceSeconds * 1000);
  }

  /**
   * The node's conditions changed: once DiskPressure has cleared, the pods waiting for it are
   * admitted, oldest first (each against what the ones before it took), and synced.
   */
  nodeConditionsChanged(): void {
    if (this.stopped) return;
    for (const pod of this.admission.waiting()) {
      if (this.admission.release(pod)) this.dispatch(pod.spec.key);
    }
  }

  private admit(spec: PodSpec, now: number, admitted?: PodRequests[]): PodRecord {
    const pod = newPodRecord(spec, now);
    this.admission.admitNew(pod, admitted);
    return pod;
  }

  private requestDeletion(pod: PodRecord, cause: NonNullable<PodRecord["deletionCause"]>, at = this.clock.now()): void {
    if (pod.deletionRequestedAt !== undefined) {
      if (cause === "shutdown") pod.deletionCause = cause;
      return;
    }
    pod.deletionRequestedAt = at;
    pod.deletionCause = cause;
  }

  private async syncPod(key: PodKey): Promise<void> {
    const pod = this.pods.get(key);
    // A request queued before stop() does not run after it.
    if (!pod || this.stopped) return;
    this.wakes.cancel(key);
    for (const container of allContainers(pod)) await refreshContainer(this.ctx, pod, container);
    await killRevivedAttempts(this.ctx, pod, this.startedIds);
    // A pod adopted while waiting, on an agent that saw no pressure at start, is admitted here.
    if (pod.deletionRequestedAt === undefined) this.admission.release(pod);
    if (pod.deletionRequestedAt !== undefined) {
      if (await this.syncTerminating(pod)) return;
    } else if (!pod.rejected && !pod.waitingForNode) {
      await this.syncRunning(pod);
    }
    pod.phase = podPhase(pod);
    updateConditions(pod, this.clock.now());
    this.checkpoint(pod);
    this.syncFailures.reset(key);
  }

  private async syncRunning(pod: PodRecord): Promise<void> {
    if (pod.sandbox && this.sandboxSuspects.delete(pod.spec.key)) {
      try {
        await ensureSandboxAlive(this.ctx, pod);
      } catch (error) {
        this.sandboxSuspects.add(pod.spec.key);
        throw error;
      }
    }
    if (!pod.sandbox) {
      try {
        pod.sandbox = await this.runtime.runPodSandbox(pod.spec);
        this.ctx.track(pod.sandbox.id, pod);
      } catch (error) {
        this.event(pod, "Warning", "FailedCreatePodSandBox", undefined, `Failed to create pod sandbox: ${errorMessage(error)}`);
        this.wakeAt(pod.spec.key, this.clock.now() + 5000);
        return;
      }
    }
    if (!isTerminalPhase(podPhase(pod))) {
      restartChangedContainers(this.ctx, pod);
      if (await this.syncInit(pod)) await this.syncApps(pod);
      // A container that could not start may have met a dead sandbox (a pause container's
      // namespaces cannot be joined once it is gone): look at the sandbox on the next pass.
      if (allContainers(pod).some((c) => c.state === "terminated" && c.terminated?.containerId === "")) this.sandboxSuspects.add(pod.spec.key);
    }
    if (isTerminalPhase(podPhase(pod))) {
      // A finished pod stops its sidecars, last declared first (KEP-753).
      this.stopNextSidecar(pod, "completed", remainingPodGraceMs(pod, this.clock.now()));
    } else if (this.probes) {
      for (const container of allContainers(pod)) this.syncProbes(pod, container, this.probes);
    }
    for (const container of allContainers(pod)) await advanceStop(this.ctx, pod, container);
  }

  /** Keeps a running attempt probed, and acts on its verdicts; an attempt being stopped is probed no more. */
  private syncProbes(pod: PodRecord, container: ContainerRecord, probes: ProbeDriver): void {
    const id = container.containerId;
    if (!id || container.state !== "running" || container.startedAt === undefined) return;
    if (container.stopping) return probes.forget(id);
    probes.probe({ podKey: pod.spec.key, containerId: id, container: container.spec, startedAt: container.startedAt, podIP: pod.sandbox?.ip ?? "127.0.0.1", saved: container.probeCounters });
    applyProbeVerdicts(this.ctx, pod, container, probes.results);
    if (container.stopping) probes.forget(id);
    else container.probeCounters = probes.counters(id);
  }

  /** Init containers one at a time; sidecars let the next one start once they have started. */
  private async syncInit(pod: PodRecord): Promise<boolean> {
    if (pod.initFailed) return false;
    for (const container of pod.init) {
      if (container.kind === "sidecar") {
        if (container.state !== "running") await startOrBackOff(this.ctx, pod, container);
        if (pod.initialized || (container.state === "running" && container.started)) continue;
        return false;
      }
      if (pod.initialized) continue;
      if (container.state === "terminated" && container.terminated?.exitCode === 0) continue;
      if (container.state === "running") return false;
      const lastExit = (container.terminated ?? container.lastTermination)?.exitCode;
      if (container.attempts > 0 && lastExit !== 0 && pod.spec.restartPolicy === "Never") {
        pod.initFailed = true;
        return false;
      }
      await startOrBackOff(this.ctx, pod, container);
      return false;
    }
    pod.initialized = true;
    return true;
  }

  private async syncApps(pod: PodRecord): Promise<void> {
    for (const container of pod.app) {
      if (container.state === "running") continue;
      const last = container.terminated ?? container.lastTermination;
      // A changed definition restarts whatever the policy, as the kubelet does.
      if (container.attempts > 0 && last && !container.definitionChanged && !containerShouldRestart(pod.spec.restartPolicy, container, last.exitCode)) continue;
      await startOrBackOff(this.ctx, pod, container);
    }
  }

  /** Drives a pod that is going away; true once it is gone (removed or replaced). */
  private async syncTerminating(pod: PodRecord): Promise<boolean> {
    const cause = pod.deletionCause ?? "removed";
    const graceMs = remainingPodGraceMs(pod, this.clock.now());
    const mains = allContainers(pod).filter((c) => c.kind !== "sidecar" && c.state === "running");
    for (const container of mains) beginStop(this.ctx, pod, container, cause, graceMs);
    if (mains.length === 0) this.stopNextSidecar(pod, cause, graceMs);
    for (const container of allContainers(pod)) await advanceStop(this.ctx, pod, container);
    if (allContainers(pod).some((c) => c.state === "running")) return false;
    await this.removePod(pod);
    return true;
  }

  /** Sidecars stop in reverse order of declaration, each after the later ones have exited. */
  private stopNextSidecar(pod: PodRecord, cause: "removed" | "replaced" | "shutdown" | "completed", graceMs: number): void {
    if (pod.app.some((c) => c.state === "running")) return;
    const running = pod.init.filter((c) => c.kind === "sidecar" && c.state === "running");
    const last = running[running.length - 1];
    if (last) beginStop(this.ctx, pod, last, cause, graceMs);
  }

  private async removePod(pod: PodRecord): Promise<void> {
    const key = pod.spec.key;
    for (const container of allContainers(pod)) {
      for (const id of [container.containerId, container.previousContainerId]) {
        if (!id) continue;
        this.ctx.untrack(id);
        await this.runtime.removeContainer(id).catch((error) => this.log(`removing container ${id}: ${errorMessage(error)}`));
      }
    }
    this.sandboxSuspects.delete(key);
    if (pod.sandbox) {
      this.ctx.untrack(pod.sandbox.id);
      await this.runtime.removePodSandbox(pod.sandbox.id).catch((error) => this.log(`removing sandbox ${pod.sandbox?.id}: ${errorMessage(error)}`));
    }
    this.backoff.forgetPod(pod.spec.uid);
    this.pullBackoff.forgetPod(pod.spec.uid);
    this.wakes.cancel(key);
    this.syncFailures.reset(key);
    this.pods.delete(key);
    if (pod.deletionCause === "removed" && !pod.spec.api) {
      const why = this.removalReason(pod.spec.source) ?? "was removed";
      this.event(pod, "Normal", "PodRemoved", undefined, `Stopped pod ${pod.spec.fullName}: its manifest ${pod.spec.source} ${why}`);
    }
    // Gone for good: nothing restarts, so the last status says how it ended (Succeeded or Failed).
    pod.phase = podPhase(pod, { terminal: true });
    updateConditions(pod, this.clock.now());
    const object = servedPod(pod, { runtimeName: this.runtime.name });
    this.served.delete(key);
    // Never throws: a store that refuses the removal must neither keep shutdown waiting nor lose the replacement.
    this.checkpoints.remove(pod, object);
    for (const listener of this.podListeners) listener(pod, object, true);
    if (pod.replacement) {
      this.pods.set(key, this.admit(pod.replacement, this.clock.now()));
      this.dispatch(key);
    } else if (this.pods.size === 0) {
      for (const resolve of this.emptyWaiters.splice(0)) resolve();
    }
  }

  /** Saves the pod with the events of its passes since the last successful save; throws what the store throws. */
  private checkpoint(pod: PodRecord): void {
    const object = servedPod(pod, { runtimeName: this.runtime.name });
    this.served.set(pod.spec.key, object);
    this.checkpoints.save(pod, object, this.backoff.forPod(pod.spec.uid));
    for (const listener of this.podListeners) listener(pod, object, false);
  }

  private event(pod: PodRecord, type: EventType, reason: string, container: ContainerRecord | undefined, message: string): void {
    const event = this.newEvent(pod, type, reason, container, message);
    this.checkpoints.addEvent(event);
    this.recorder.emit(event);
  }

  private newEvent(pod: PodRecord, type: EventType, reason: string, container: ContainerRecord | undefined, message: string): KubeEvent {
    return {
      at: this.clock.now(),
      type,
      reason,
      podKey: pod.spec.key,
      namespace: pod.spec.namespace,
      pod: pod.spec.fullName,
      podUid: pod.spec.uid,
      container: container?.name ?? "",
      message,
    };
  }

  private onPlegEvent(event: PodLifecycleEvent): void {
    if (event.type === "RuntimeHealth") {
      this.log(`runtime ${this.runtime.name} ${event.healthy ? "healthy" : "unhealthy"}: ${event.message}`);
      // Unhealthy: every pod syncs now, so what fails is reported (FailedSync) and retried.
      // Healthy again: anything may have happened meanwhile, sandboxes dying included.
      for (const key of this.pods.keys()) {
        if (event.healthy) this.sandboxSuspects.add(key);
        this.dispatch(key);
      }
      return;
    }
    if (event.sandbox) {
      if (event.type === "ContainerDied") this.sandboxSuspects.add(event.podKey);
    } else if (event.type === "ContainerStarted") {
      this.startedIds.add(event.containerId);
    }
    this.requestSync(event.podKey);
  }

  /**
   * One pod's failure never stops the loop or another pod: the retry is armed first, then the error
   * is reported once (a store that cannot write fails every retry the same way) and what the pass
   * did is saved if the store allows. Never throws.
   */
  private onSyncError(key: PodKey, error: unknown): void {
    const message = errorMessage(error);
    const pod = this.pods.get(key);
    if (!pod) {
      this.log(`sync of pod ${key} failed: ${message}`);
      return;
    }
    const failure = this.syncFailures.failed(key, message);
    this.wakeAt(key, this.clock.now() + failure.retryInMs);
    if (failure.isNew) {
      this.log(`sync of pod ${key} failed: ${message}`);
      this.event(pod, "Warning", "FailedSync", undefined, `error syncing pod: ${message}`);
    }
    try {
      this.checkpoint(pod);
    } catch (saveError) {
      if (failure.isNew && errorMessage(saveError) !== message) this.log(`saving pod ${key}: ${errorMessage(saveError)}`);
    }
  }
}

/** Whether `id` is the pod's sandbox or one of its containers. */
function trackedKind(pod: PodRecord, id: string): "sandbox" | "container" {
  return pod.sandbox?.id === id ? "sandbox" : "container";
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
