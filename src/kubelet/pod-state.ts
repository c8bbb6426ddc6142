/**
 * What the loop knows about each pod and container between passes. Everything here is plain data,
 * so the store can checkpoint it and a restarted agent can load it back.
 */
import type { ContainerSpec, PodKey, PodSpec, ProbeKind, ResourceRequirements } from "../manifest/types.ts";
import type { ProbeTrackerSnapshot } from "../prober/tracker.ts";
import { isSidecar } from "../manifest/types.ts";
import type { ContainerKind, Sandbox } from "../runtime/runtime.ts";
import type { KillCause, StopCause } from "./lifecycle/kill-cause.ts";

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";
export type ContainerPhase = "waiting" | "running" | "terminated";

export interface Termination {
  containerId: string;
  exitCode: number;
  signal?: number;
  /** Completed, Error, OOMKilled, StartError ... */
  reason: string;
  message?: string;
  startedAt?: number;
  finishedAt: number;
  /** Why it was killed (kill-cause.ts); absent when it ended on its own. Never in the v1 object. */
  killCause?: KillCause;
  /** The agent sent SIGKILL: the grace period ran out. */
  graceExpired?: true;
}

export interface Waiting {
  /** ContainerCreating, PodInitializing, CrashLoopBackOff, ErrImagePull, ImagePullBackOff ... */
  reason: string;
  message?: string;
}

/** A stop in progress: preStop first, then SIGTERM, then SIGKILL at `deadline`. */
export interface Stopping {
  cause: StopCause;
  startedAt: number;
  graceMs: number;
  stage: "preStop" | "sigterm" | "sigkill";
  /** When SIGKILL is due (set once SIGTERM is sent). */
  deadline?: number;
}

/** What every container record has, whatever its state. */
interface ContainerBase {
  name: string;
  kind: ContainerKind;
  spec: ContainerSpec;
  /**
   * The latest attempt's runtime id: the running one's, or the one that ended (kept while the
   * container waits to restart, for status and removal); absent before the first start.
   */
  containerId?: string;
  /** The dead container kept for `logs --previous`, like the kubelet's garbage collector keeps one. */
  previousContainerId?: string;
  /** Starts so far; the next start is attempt number `attempts`. The restart count derives from it (restartCountOf). */
  attempts: number;
  lastTermination?: Termination;
  /** The finish time whose back-off wait already produced a BackOff event (one per wait). */
  backoffAnnouncedFor?: number;
  /** The pod was updated in place with a new definition for this container: restart it (container-changes.ts). */
  definitionChanged?: true;
  /** The latest attempt's stop signal as the runtime reported it (docker: the image's STOPSIGNAL). */
  stopSignal?: string;
  /**
   * The resources the running attempt has, while an accepted resize is not applied to it yet
   * (pod-resize.ts); null: it has none. Absent: it has its allocation.
   */
  actuated?: ResourceRequirements | null;
}

/** Not running: before its first start, or between an exit and the restart (back-off, a pull). */
export interface WaitingState {
  state: "waiting";
  waiting?: Waiting;
  ready: false;
  started: false;
}

/** An attempt the runtime runs. */
export interface RunningState {
  state: "running";
  containerId: string;
  startedAt: number;
  ready: boolean;
  /** Follows the startup probe: true once it succeeded (or at start when there is none). */
  started: boolean;
  stopping?: Stopping;
  /**
   * The current attempt's postStart hook (post-start.ts): running since `startedAt`, or `failed`
   * with the handler's message while the container is killed for it.
   */
  postStart?: { startedAt: number; failed?: string };
  /**
   * The probe trackers' counters for the current attempt, so a restarted agent carries on where it
   * was (a liveness probe 2 failures into 3 needs one more, not three).
   */
  probeCounters?: Partial<Record<ProbeKind, ProbeTrackerSnapshot>>;
}

/** The latest attempt ended (or could not start) and no restart has begun. */
export interface TerminatedState {
  state: "terminated";
  terminated: Termination;
  ready: false;
  started: false;
}

export type ContainerState = WaitingState | RunningState | TerminatedState;

/** Every state's own fields, declared absent on the others, so a reader of the union still reads `container.terminated` (undefined when not terminated). */
type Absent<T> = { [K in Exclude<StateKey, keyof T>]?: never };
type StateKey = keyof WaitingState | keyof RunningState | keyof TerminatedState;

export type WaitingContainer = ContainerBase & WaitingState & Absent<WaitingState & ContainerBase>;
export type RunningContainer = ContainerBase & RunningState & Absent<RunningState & ContainerBase>;
export type TerminatedContainer = ContainerBase & TerminatedState & Absent<TerminatedState & ContainerBase>;

/** A container as the loop knows it, by state: each state carries its own fields only. */
export type ContainerRecord = WaitingContainer | RunningContainer | TerminatedContainer;

/** The fields only some state has: what a transition replaces. */
const STATE_KEYS = ["state", "waiting", "ready", "started", "startedAt", "stopping", "postStart", "probeCounters", "terminated"] as const satisfies readonly StateKey[];

/**
 * Moves a container to a new state, given whole: the old state's fields go and the new state's
 * come, so no transition clears fields one by one. The record stays the same object (the pod's
 * lists, the hooks' and stops' closures hold it). `containerId` is the latest attempt's and is set
 * by a start (it is required while running). Returns the record, typed by its new state.
 */
export function transition<S extends ContainerState>(container: ContainerRecord, next: S): Extract<ContainerRecord, { state: S["state"] }> {
  const record = container as unknown as Record<string, unknown>;
  for (const key of STATE_KEYS) delete record[key];
  return Object.assign(record, next) as unknown as Extract<ContainerRecord, { state: S["state"] }>;
}

export interface PodRecord {
  spec: PodSpec;
  createdAt: number;
  /** When the first container started, like status.startTime. */
  startTime?: number;
  sandbox?: Sandbox;
  init: ContainerRecord[];
  app: ContainerRecord[];
  /** Ephemeral containers (`kubectl debug`), in the order they were added; absent in older checkpoints. */
  ephemeral?: ContainerRecord[];
  /** Set when the pod is going away (removed, replaced, shutdown). */
  deletionRequestedAt?: number;
  deletionCause?: "removed" | "replaced" | "shutdown";
  /** The grace a delete through the API asked for (deletionGracePeriodSeconds); else the spec's. */
  deletionGraceSeconds?: number;
  /** A changed manifest waiting for the old pod to stop completely. */
  replacement?: PodSpec;
  /** All init containers have succeeded (or sidecars started) once; never unset. */
  initialized: boolean;
  /** An init container failed under restartPolicy Never: the pod is Failed. */
  initFailed: boolean;
  phase: PodPhase;
  /**
   * Refused by admission (`OutOfcpu` ...): the pod never runs and stays Failed with this reason and
   * message, as the kubelet's rejectPod leaves it. Checkpointed, so a restarted agent keeps it refused.
   */
  rejected?: { reason: string; message: string };
  /**
   * Not admitted yet because the node is under pressure (DiskPressure): the pod is Pending and
   * nothing of it runs until the pressure clears, when it is admitted as a new pod is.
   */
  waitingForNode?: { reason: string; message: string };
  /**
   * Evicted, as the kubelet's ShouldEvict handlers decide it: by the eviction manager (an emptyDir
   * past its sizeLimit; reason Evicted, eviction/, empty-dir-eviction.ts) or past the pod's
   * activeDeadlineSeconds (reason DeadlineExceeded, active-deadline.ts). Failed at once with the
   * reason and message, its containers stopped with `graceMs`, nothing restarted. Reason and grace
   * absent: the eviction manager's (checkpoints written before the deadline was kept).
   */
  evicted?: { message: string; reason?: string; graceMs?: number };
  /** Each condition's status and when it last changed (lastTransitionTime), by condition type. */
  conditions: Record<string, { status: "True" | "False"; since: number }>;
  /**
   * While a resize waits (PodResizePending): the resources each container it changes is still
   * allocated, by name (null: none). Absent: the spec's resources are the allocation (pod-resize.ts).
   */
  allocation?: Record<string, ResourceRequirements | null>;
  /** The resize conditions, when either is set. */
  resize?: ResizeConditions;
}

/** The PodResizePending reasons (v1.PodReasonDeferred, PodReasonInfeasible). */
export type ResizePendingReason = "Deferred" | "Infeasible";

/** The pod's resize conditions as the kubelet's status manager caches them; each absent when not set. */
export interface ResizeConditions {
  pending?: { reason: ResizePendingReason; message: string; generation?: number; since: number };
  /** Accepted and not yet applied to every running container; `error`: applying failed (reason Error). */
  inProgress?: { generation?: number; since: number; error?: string };
}

/** `podHasInit`: the pod has init containers, so every container waits as PodInitializing until it is created, as the kubelet reports it. */
export function newContainerRecord(spec: ContainerSpec, kind: ContainerKind, podHasInit: boolean): ContainerRecord {
  return {
    name: spec.name,
    kind,
    spec,
    attempts: 0,
    state: "waiting",
    waiting: { reason: podHasInit ? "PodInitializing" : "ContainerCreating" },
    ready: false,
    started: false,
  };
}

/**
 * A record as a checkpoint holds it (record_json), in this version's shape. Checkpoints written
 * before the record was a union by state kept the fields of the states a container had left (a
 * terminated container's startedAt and probe counters, a waiting one's last start): those are
 * dropped, the fields of the state it is in are kept.
 */
export function loadedContainerRecord(saved: ContainerRecord): ContainerRecord {
  const { name, kind, spec, containerId, previousContainerId, attempts, lastTermination, backoffAnnouncedFor, definitionChanged, stopSignal, actuated } = saved;
  const base = {
    name,
    kind,
    spec,
    attempts,
    ...(containerId !== undefined && { containerId }),
    ...(previousContainerId !== undefined && { previousContainerId }),
    ...(lastTermination !== undefined && { lastTermination }),
    ...(backoffAnnouncedFor !== undefined && { backoffAnnouncedFor }),
    ...(definitionChanged !== undefined && { definitionChanged }),
    ...(stopSignal !== undefined && { stopSignal }),
  };
  // Only a running attempt can wait for its resize.
  const running = actuated !== undefined ? { actuated } : {};
  switch (saved.state) {
    case "running": {
      const { startedAt, ready, started, stopping, postStart, probeCounters } = saved;
      return {
        ...base,
        ...running,
        state: "running",
        containerId: saved.containerId,
        startedAt,
        ready,
        started,
        ...(stopping !== undefined && { stopping }),
        ...(postStart !== undefined && { postStart }),
        ...(probeCounters !== undefined && { probeCounters }),
      };
    }
    case "terminated":
      return { ...base, state: "terminated", terminated: saved.terminated, ready: false, started: false };
    default:
      return { ...base, state: "waiting", ...(saved.waiting !== undefined && { waiting: saved.waiting }), ready: false, started: false };
  }
}

/** A checkpointed pod record with its containers in this version's shape (loadedContainerRecord). */
export function loadedPodRecord(saved: PodRecord): PodRecord {
  return {
    ...saved,
    init: saved.init.map(loadedContainerRecord),
    app: saved.app.map(loadedContainerRecord),
    ...(saved.ephemeral !== undefined && { ephemeral: saved.ephemeral.map(loadedContainerRecord) }),
  };
}

export function newPodRecord(spec: PodSpec, now: number): PodRecord {
  return {
    spec,
    createdAt: spec.api?.createdAt ?? now,
    init: spec.initContainers.map((c) => newContainerRecord(c, isSidecar(c) ? "sidecar" : "init", true)),
    app: spec.containers.map((c) => newContainerRecord(c, "app", spec.initContainers.length > 0)),
    ephemeral: (spec.ephemeralContainers ?? []).map((c) => newContainerRecord(c, "ephemeral", spec.initContainers.length > 0)),
    initialized: spec.initContainers.length === 0,
    initFailed: false,
    phase: "Pending",
    conditions: {},
  };
}

/** status.restartCount: every start after the first (a start that failed counts, as the kubelet counts it). */
export function restartCountOf(container: Pick<ContainerRecord, "attempts">): number {
  return Math.max(container.attempts - 1, 0);
}

export function allContainers(pod: PodRecord): ContainerRecord[] {
  return [...pod.init, ...pod.app, ...(pod.ephemeral ?? [])];
}

export function podKeyOf(pod: PodRecord): PodKey {
  return pod.spec.key;
}

/** The name the kubelet uses in messages: `NAME_NAMESPACE(UID)`. */
export function podFullDescription(pod: PodRecord): string {
  return `${pod.spec.fullName}_${pod.spec.namespace}(${pod.spec.uid})`;
}
