/**
 * What the loop knows about each pod and container between passes. Everything here is plain data,
 * so the store can checkpoint it and a restarted agent can load it back.
 */
import type { ContainerSpec, PodKey, PodSpec, ProbeKind } from "../manifest/types.ts";
import type { ProbeTrackerSnapshot } from "../prober/tracker.ts";
import { isSidecar } from "../manifest/types.ts";
import type { ContainerKind, Sandbox } from "../runtime/runtime.ts";
import type { KillCause, StopCause } from "./kill-cause.ts";

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

export interface ContainerRecord {
  name: string;
  kind: ContainerKind;
  spec: ContainerSpec;
  state: ContainerPhase;
  waiting?: Waiting;
  /** The current attempt's runtime id, while there is one. */
  containerId?: string;
  /** The dead container kept for `logs --previous`, like the kubelet's garbage collector keeps one. */
  previousContainerId?: string;
  /** Starts so far; the next start is attempt number `attempts`. The restart count derives from it (restartCountOf). */
  attempts: number;
  startedAt?: number;
  /** Set while state is terminated. */
  terminated?: Termination;
  lastTermination?: Termination;
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
   * was (a liveness probe 2 failures into 3 needs one more, not three). Cleared on a new attempt.
   */
  probeCounters?: Partial<Record<ProbeKind, ProbeTrackerSnapshot>>;
  /** The finish time whose back-off wait already produced a BackOff event (one per wait). */
  backoffAnnouncedFor?: number;
  /** The pod was updated in place with a new definition for this container: restart it (container-changes.ts). */
  definitionChanged?: true;
  /** The current attempt's stop signal as the runtime reported it (docker: the image's STOPSIGNAL). */
  stopSignal?: string;
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
   * Evicted by the kubelet's eviction manager (an emptyDir past its sizeLimit): Failed at once with
   * reason Evicted and this message, its containers stopped, nothing restarted (eviction/, empty-dir-eviction.ts).
   */
  evicted?: { message: string };
  /** Each condition's status and when it last changed (lastTransitionTime), by condition type. */
  conditions: Record<string, { status: "True" | "False"; since: number }>;
}

export function newContainerRecord(spec: ContainerSpec, kind: ContainerKind): ContainerRecord {
  return {
    name: spec.name,
    kind,
    spec,
    state: "waiting",
    waiting: { reason: kind === "app" || kind === "ephemeral" ? "ContainerCreating" : "PodInitializing" },
    attempts: 0,
    ready: false,
    started: false,
  };
}

export function newPodRecord(spec: PodSpec, now: number): PodRecord {
  return {
    spec,
    createdAt: spec.api?.createdAt ?? now,
    init: spec.initContainers.map((c) => newContainerRecord(c, isSidecar(c) ? "sidecar" : "init")),
    app: spec.containers.map((c) => newContainerRecord(c, "app")),
    ephemeral: (spec.ephemeralContainers ?? []).map((c) => newContainerRecord(c, "ephemeral")),
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
