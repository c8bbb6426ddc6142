/**
 * The sync loop. `sync(desired)` is level-triggered: it receives every wanted pod and reacts to the
 * difference with what it runs. Each pod is then synced by its own worker, in the kubelet's order:
 * sandbox, refresh from the runtime, termination if going away, init containers, app containers,
 * probes (pod-actions.ts). The loop never sleeps: it wakes on the PLEG's events, on the probes'
 * verdicts, on timers it armed (back-off expiry, grace deadlines) and on the sources' changes. Each
 * pass's status is built once and shipped by the status manager.
 */
import type { Clock } from "../clock.ts";
import type { NodeAllocatable } from "../eviction/node-allocatable.ts";
import type { OomScorePolicy } from "./oom-score-adj.ts";
import { EventRecorder, type EventType, type KubeEvent } from "../v1/kube-event.ts";
import { NO_METRICS, type KubeletMetricsRecorder } from "../stats/kubelet-metrics.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import { EventedPleg } from "../pleg/evented-pleg.ts";
import type { PodLifecycleEvent, PodLifecycleEventGenerator } from "../pleg/pleg.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { V1Pod } from "../v1/v1.ts";
import type { PodRequests } from "./admission/admission.ts";
import type { AdoptionPlan } from "./adoption/adoption.ts";
import { applyAdoption } from "./adoption/adoption-apply.ts";
import { BackoffStore, DEFAULT_BACKOFF, type BackoffEntry, type BackoffSettings } from "./backoff.ts";
import { refreshContainer } from "./container-lifecycle.ts";
import { applyDesired, type DesiredLoop } from "./desired-set.ts";
import { podPhase } from "./status/phase.ts";
import { syncRunning, syncTerminating, type PodPass } from "./pod-actions.ts";
import { PodAdmission, type NodeConditions } from "./admission/pod-admission.ts";
import type { PodStateSink } from "./pod-checkpoints.ts";
import { updateConditions } from "./status/pod-conditions.ts";
import { deleteApiPod, podEvent, requestDeletion, type DeletionCause } from "./pod-deletion.ts";
import { removePodFromRuntime } from "./pod-removal.ts";
import { allContainers, newPodRecord, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import { PodWorkers } from "./pod-workers.ts";
import type { ProbeDriver } from "./probe-actions.ts";
import { killRevivedAttempts } from "./runtime-restarts.ts";
import type { SyncContext } from "./sync-context.ts";
import { StatusManager, type PodListener } from "./status/status-manager.ts";
import { RETRY_BASE_MS, SyncFailures } from "./sync-failures.ts";
import { WakeTimers } from "./wake-timers.ts";
import { acceptResize, clearPendingResize, currentAllocation, deferResize, finishResize, podGeneration, resizeRequested, resizeSummary, type Allocation } from "./pod-resize.ts";
import { emptyDirEviction } from "./empty-dir-eviction.ts";
import { podObjectNames, type ObjectChange, type PodObjectSource } from "./objects/pod-object-source.ts";
import { TokenCache } from "./volumes/token-cache.ts";
import { measureDir, type MeasureDir } from "../eviction/dir-usage.ts";
import type { LocalStorageMonitor } from "../eviction/local-storage.ts";

export type { ProbeDriver } from "./probe-actions.ts";
export type { PodStateSink } from "./pod-checkpoints.ts";
export type { NodeConditions } from "./admission/pod-admission.ts";
export type { PodListener } from "./status/status-manager.ts";

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
  /** The node's memory and what its host allows, for each container's OOM score (oom-score-adj.ts); without it none is set. */
  oomScores?: OomScorePolicy;
  /** The node's conditions: under DiskPressure new pods wait (call nodeConditionsChanged when it clears). */
  node?: NodeConditions;
  /**
   * Where the runtime's container events come from, routed to pods. Default: a PLEG over the
   * runtime's event stream alone (not started: no relist), which the loop's tests drive directly.
   */
  pleg?: PodLifecycleEventGenerator;
  /** How emptyDir usage is measured against sizeLimits (default: a bounded walk of the runtime's volume directory). */
  measureDir?: MeasureDir;
  /** Where the loop's figures go as they happen (pod worker passes, pod starts, container starts). */
  metrics?: KubeletMetricsRecorder;
  /**
   * Where the ConfigMaps, Secrets, Services and ServiceAccount tokens pods reference come from (node
   * mode: the cluster's). Without it a container referencing one waits (CreateContainerConfigError).
   */
  objects?: PodObjectSource;
}

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
  private readonly status: StatusManager;
  private readonly syncFailures = new SyncFailures();
  private readonly pleg: PodLifecycleEventGenerator;
  /** Tracked ids the runtime reported started; a pod's are consumed by its next sync (runtime-restarts.ts). */
  private readonly startedIds = new Set<string>();
  /** Pods whose sandbox may have died (an event about it, the runtime back from an outage). */
  private readonly sandboxSuspects = new Set<PodKey>();
  private readonly emptyWaiters: Array<() => void> = [];
  private unwatch?: () => void;
  /** Set by stop(): nothing may sync, signal or arm a timer any more, whatever completes late. */
  private stopped = false;
  private readonly ctx: SyncContext;
  private readonly pass: PodPass;
  private readonly desiredLoop: DesiredLoop;
  private readonly localStorage: LocalStorageMonitor;
  private readonly metrics: KubeletMetricsRecorder;
  /** Records that had a pass: the next one is a "sync", not a "create" (weak: a removed pod leaves nothing). */
  private readonly passed = new WeakSet<PodRecord>();
  private lastIterationAt: number;
  /** Armed while the store refuses a removal: no pod may sync again to carry it (the pod is gone). */
  private cancelRemovalRetry?: () => void;
  private readonly objects?: PodObjectSource;
  private readonly tokens?: TokenCache;
  /** Records whose references the source was told about (a changed spec is a new record). */
  private readonly registered = new WeakSet<PodRecord>();
  private unlistenObjects?: () => void;

  constructor(options: KubeletOptions) {
    this.runtime = options.runtime;
    this.clock = options.clock;
    this.metrics = options.metrics ?? NO_METRICS;
    this.lastIterationAt = this.clock.now();
    this.pleg = options.pleg ?? new EventedPleg({ runtime: this.runtime, clock: this.clock, log: options.log });
    this.status = new StatusManager({
      runtimeName: this.runtime.name,
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
    if (options.objects) {
      this.objects = options.objects;
      this.tokens = new TokenCache({ source: options.objects, clock: this.clock, issued: (uid) => this.wakePodWithUid(uid), log: this.log });
      this.unlistenObjects = options.objects.onChange((change) => this.onObjectChange(change));
    }
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
      metrics: this.metrics,
      stopped: () => this.stopped,
      ...(this.objects && { objects: this.objects }),
      ...(this.tokens && { tokens: this.tokens }),
      allocatable: options.allocatable,
      ...(options.oomScores && { oomScores: options.oomScores }),
    };
    this.pass = { ctx: this.ctx, probes: this.probes, sandboxSuspects: this.sandboxSuspects };
    this.localStorage = emptyDirEviction({
      ctx: this.ctx,
      pods: this.pods,
      volumePath: (pod, volume) => {
        const spec = pod.spec.volumes.find((v) => v.name === volume);
        return this.runtime.emptyDirPath?.(pod.spec.uid, volume, spec?.type === "emptyDir" ? spec.medium : undefined);
      },
      measure: options.measureDir ?? measureDir,
      metrics: this.metrics,
    });
    this.desiredLoop = {
      pods: this.pods,
      admit: (spec, admitted) => this.admit(spec, this.clock.now(), admitted),
      admittedNow: () => this.admission.admittedNow(),
      requestDeletion: (pod, cause) => this.requestDeletion(pod, cause),
      deleteApiPod: (pod, deletion) => deleteApiPod(this.ctx, pod, deletion),
      resize: (pod, before) => this.resize(pod, before),
    };
  }

  /**
   * The allocation manager's handlePodResourcesResize: a spec asking for new resources is accepted
   * when the pod's new requests fit beside the other pods' allocations (ResizeStarted), else it
   * waits as Deferred with admission's message (ResizeDeferred, once per reason and generation).
   */
  private resize(pod: PodRecord, before: Allocation): void {
    if (!resizeRequested(pod, before)) return clearPendingResize(pod);
    const now = this.clock.now();
    const generation = podGeneration(pod.spec);
    const refusal = this.admission.resizeRefusal(pod);
    if (!refusal) {
      acceptResize(pod, before, now, generation);
      this.event(pod, "Normal", "ResizeStarted", undefined, `Pod resize started: ${resizeSummary(pod.spec, generation)}`);
    } else if (deferResize(pod, before, { reason: "Deferred", message: refusal.message }, now, generation)) {
      this.event(pod, "Warning", "ResizeDeferred", undefined, `Pod resize Deferred: ${resizeSummary(pod.spec, generation, refusal.message)}`);
    }
  }

  /** Subscribes to runtime events so an exit wakes its pod at once. Idempotent. */
  start(): void {
    this.stopped = false;
    this.unwatch ??= this.pleg.watch((event) => this.onPlegEvent(event));
    // A runtime whose volumes the agent cannot read has nothing to measure.
    if (this.runtime.emptyDirPath) this.localStorage.start();
  }

  /** One round of the eviction manager's emptyDir sizeLimit check (every 10 s once started). */
  checkLocalStorage(): Promise<void> {
    return this.localStorage.check();
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
    this.unlistenObjects?.();
    this.wakes.clear();
    this.cancelRemovalRetry?.();
    this.cancelRemovalRetry = undefined;
    this.localStorage.stop();
    this.probes?.stop();
  }

  /**
   * One level-triggered pass: creates new pods, replaces changed ones, stops removed ones, then
   * syncs every pod (with `changedOnly`, only those the set changed). Resolves once every pod worker is idle (tests await it; `run` need not).
   * Until `sourcesReady`, nothing is stopped: the agent cannot kill what it is about to adopt.
   */
  sync(desired: Map<PodKey, PodSpec>, options: { sourcesReady?: boolean; changedOnly?: boolean } = {}): Promise<void> {
    this.noteSyncLoopIteration();
    if (this.stopped) return this.workers.idle();
    // Pods this set changes are synced first: a new pod's start must not wait behind every other pod's pass.
    const touched = applyDesired(this.desiredLoop, desired, options.sourcesReady ?? true);
    for (const key of touched) if (this.pods.has(key)) this.dispatch(key);
    // As the kubelet's HandlePodAdditions/Updates/Removes: a pod the set did not change has its own
    // wakes (PLEG events, probes, timers), so a hundred pods bound one burst at a time are not a
    // hundred passes over every pod.
    if (options.changedOnly) return this.workers.idle();
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
    for (const key of plan.sandboxesToCheck) this.sandboxSuspects.add(key);
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
    return this.status.listen(listener);
  }

  /** The live pods as their last passes drew them. */
  servedPods(): V1Pod[] {
    return this.status.servedPods();
  }

  /**
   * The loop went round: the sources delivered the desired set, or a pod had its pass. /healthz/syncloop
   * reads the age of the last one, as the kubelet's syncLoopMonitor.
   */
  noteSyncLoopIteration(): void {
    this.lastIterationAt = this.clock.now();
  }

  /** When the loop last went round (epoch ms). */
  lastSyncLoopIteration(): number {
    return this.lastIterationAt;
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

  private requestDeletion(pod: PodRecord, cause: DeletionCause, at = this.clock.now()): void {
    requestDeletion(pod, cause, at);
  }

  private async syncPod(key: PodKey): Promise<void> {
    const pod = this.pods.get(key);
    // A request queued before stop() does not run after it.
    if (!pod || this.stopped) return;
    const startedAt = this.clock.now();
    this.lastIterationAt = startedAt;
    const operation = pod.deletionRequestedAt !== undefined ? "kill" : this.passed.has(pod) ? "sync" : "create";
    this.passed.add(pod);
    try {
      await this.syncPodPass(pod);
    } finally {
      this.metrics.podWorkerDuration(operation, (this.clock.now() - startedAt) / 1000);
    }
  }

  private async syncPodPass(pod: PodRecord): Promise<void> {
    const key = pod.spec.key;
    this.wakes.cancel(key);
    if (this.objects && !this.registered.has(pod)) {
      this.registered.add(pod);
      this.objects.registerPod(pod.spec);
    }
    for (const container of allContainers(pod)) await refreshContainer(this.ctx, pod, container);
    await killRevivedAttempts(this.ctx, pod, this.startedIds);
    // A pod adopted while waiting, on an agent that saw no pressure at start, is admitted here.
    if (pod.deletionRequestedAt === undefined) this.admission.release(pod);
    if (pod.deletionRequestedAt !== undefined) {
      if (await syncTerminating(this.pass, pod)) return this.removePod(pod);
    } else if (!pod.rejected && !pod.waitingForNode) {
      await syncRunning(this.pass, pod);
      const resized = finishResize(pod);
      if (resized) this.event(pod, "Normal", "ResizeCompleted", undefined, `Pod resize completed: ${resizeSummary(pod.spec, resized.generation)}`);
    }
    const before = pod.phase;
    pod.phase = podPhase(pod);
    if (pod.phase === "Running" && before !== "Running") this.metrics.podStartDuration((this.clock.now() - pod.createdAt) / 1000);
    updateConditions(pod, this.clock.now());
    this.checkpoint(pod);
    this.syncFailures.reset(key);
  }

  private async removePod(pod: PodRecord): Promise<void> {
    const key = pod.spec.key;
    await removePodFromRuntime(this.ctx, pod);
    this.sandboxSuspects.delete(key);
    this.backoff.forgetPod(pod.spec.uid);
    this.pullBackoff.forgetPod(pod.spec.uid);
    this.wakes.cancel(key);
    this.syncFailures.reset(key);
    this.pods.delete(key);
    if (this.registered.has(pod)) {
      this.objects?.unregisterPod(pod.spec.uid);
      this.tokens?.forgetPod(pod.spec.uid);
    }
    if (pod.deletionCause === "removed" && !pod.spec.api) {
      const why = this.removalReason(pod.spec.source) ?? "was removed";
      this.event(pod, "Normal", "PodRemoved", undefined, `Stopped pod ${pod.spec.fullName}: its manifest ${pod.spec.source} ${why}`);
    }
    // Gone for good: nothing restarts, so the last status says how it ended (Succeeded or Failed).
    pod.phase = podPhase(pod, { terminal: true });
    updateConditions(pod, this.clock.now());
    // Never throws: a store that refuses the removal must neither keep shutdown waiting nor lose the replacement.
    this.status.remove(pod);
    this.retryRemovalsLater();
    this.retryPendingResizes();
    if (pod.replacement) {
      if (pod.replacement.uid === pod.spec.uid) this.metrics.podRestarted(!pod.replacement.api);
      this.pods.set(key, this.admit(pod.replacement, this.clock.now()));
      this.dispatch(key);
    } else if (this.pods.size === 0) {
      for (const resolve of this.emptyWaiters.splice(0)) resolve();
    }
  }

  /** A pod went, so its requests are free: each resize that waits is tried again (the allocation manager's RetryPendingResizes). */
  private retryPendingResizes(): void {
    for (const pod of this.pods.values()) {
      if (!pod.resize?.pending || pod.deletionRequestedAt !== undefined) continue;
      this.resize(pod, currentAllocation(pod));
      if (!pod.resize?.pending) this.dispatch(pod.spec.key);
    }
  }

  /** A ConfigMap or Secret a pod references changed (or arrived): those pods sync again; new Services wake the pods waiting for them. */
  private onObjectChange(change: ObjectChange): void {
    if (this.stopped) return;
    for (const pod of this.pods.values()) {
      if (change.kind === "services") {
        if (allContainers(pod).some((c) => c.state === "waiting" && c.waiting?.reason === "CreateContainerConfigError")) this.dispatch(pod.spec.key);
        continue;
      }
      const names = podObjectNames(pod.spec);
      const set = change.kind === "configMap" ? names.configMaps : names.secrets;
      if (pod.spec.namespace === change.namespace && set.has(change.name)) this.dispatch(pod.spec.key);
    }
  }

  private wakePodWithUid(uid: string): void {
    if (this.stopped) return;
    for (const pod of this.pods.values()) if (pod.spec.uid === uid) this.dispatch(pod.spec.key);
  }

  /** A removal the store refused (a full disk) is written again every few seconds until it is recorded. */
  private retryRemovalsLater(): void {
    // remove() has just tried the write: the first retry waits, rather than hit a full disk twice at once.
    if (this.cancelRemovalRetry || this.stopped || !this.status.removalsPending()) return;
    this.cancelRemovalRetry = this.clock.setTimeout(() => {
      this.cancelRemovalRetry = undefined;
      this.status.retryRemovals();
      this.retryRemovalsLater();
    }, RETRY_BASE_MS);
  }

  /** Saves the pod with the events of its passes since the last successful save; throws what the store throws. */
  private checkpoint(pod: PodRecord): void {
    this.status.save(pod, this.backoff.forPod(pod.spec.uid));
  }

  private event(pod: PodRecord, type: EventType, reason: string, container: ContainerRecord | undefined, message: string): void {
    const event = this.newEvent(pod, type, reason, container, message);
    this.status.addEvent(event);
    this.recorder.emit(event);
  }

  private newEvent(pod: PodRecord, type: EventType, reason: string, container: ContainerRecord | undefined, message: string): KubeEvent {
    return podEvent(pod, this.clock.now(), type, reason, container, message);
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
