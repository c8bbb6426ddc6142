/**
 * The four pod conditions the kubelet reports, with their reasons and messages, e.g.
 * Ready=False "containers with unready status: [web]". Transition times live on the record.
 */
import type { V1PodCondition } from "../../v1/v1.ts";
import { isoTime } from "../../v1/time.ts";
import type { ContainerRecord, PodRecord } from "../pod-state.ts";

interface ConditionValue {
  type: string;
  ok: boolean;
  reason?: string;
  message?: string;
}

function names(containers: ContainerRecord[]): string {
  return `[${containers.map((c) => c.name).join(" ")}]`;
}

function evaluate(pod: PodRecord): ConditionValue[] {
  const incomplete = pod.init.filter((c) =>
    c.kind === "sidecar" ? !(c.state === "running" && c.started) : !(c.state === "terminated" && c.terminated?.exitCode === 0),
  );
  const initialized = pod.initialized || incomplete.length === 0;
  const completed = pod.phase === "Succeeded" || pod.phase === "Failed";
  const counted = [...pod.init.filter((c) => c.kind === "sidecar"), ...pod.app];
  const unready = counted.filter((c) => !c.ready);
  const readyValue = (type: string): ConditionValue =>
    completed
      ? { type, ok: false, reason: "PodCompleted" }
      : unready.length === 0
        ? { type, ok: true }
        : { type, ok: false, reason: "ContainersNotReady", message: `containers with unready status: ${names(unready)}` };
  return [
    { type: "PodReadyToStartContainers", ok: pod.sandbox !== undefined },
    initialized
      ? { type: "Initialized", ok: true }
      : { type: "Initialized", ok: false, reason: "ContainersNotInitialized", message: `containers with incomplete status: ${names(incomplete)}` },
    readyValue("Ready"),
    readyValue("ContainersReady"),
  ];
}

/** Recomputes the conditions, moving a transition time only when a status actually changes. */
export function updateConditions(pod: PodRecord, now: number): void {
  for (const value of evaluate(pod)) {
    const status = value.ok ? "True" : "False";
    if (pod.conditions[value.type]?.status !== status) pod.conditions[value.type] = { status, since: now };
  }
}

export function podConditions(pod: PodRecord): V1PodCondition[] {
  return [...evaluate(pod).map((value) => {
    const condition: V1PodCondition = {
      type: value.type,
      status: value.ok ? "True" : "False",
      lastProbeTime: null,
      lastTransitionTime: isoTime(pod.conditions[value.type]?.since ?? pod.createdAt),
    };
    if (value.reason) condition.reason = value.reason;
    if (value.message) condition.message = value.message;
    return condition;
  }), ...resizeConditions(pod)];
}

/** PodResizePending and PodResizeInProgress, after the others as the status manager appends them; True while set. */
function resizeConditions(pod: PodRecord): V1PodCondition[] {
  const { pending, inProgress } = pod.resize ?? {};
  const conditions: V1PodCondition[] = [];
  const condition = (type: string, since: number, reason?: string, message?: string): V1PodCondition => ({
    type,
    status: "True",
    lastProbeTime: null,
    lastTransitionTime: isoTime(since),
    ...(reason && { reason }),
    ...(message && { message }),
  });
  if (pending) conditions.push(condition("PodResizePending", pending.since, pending.reason, pending.message));
  if (inProgress) conditions.push(condition("PodResizeInProgress", inProgress.since, inProgress.error && "Error", inProgress.error));
  return conditions;
}

/** Whether the pod's Ready condition holds now. */
export function isPodReady(pod: PodRecord): boolean {
  return evaluate(pod).find((c) => c.type === "Ready")?.ok ?? false;
}
