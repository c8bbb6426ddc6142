/**
 * After an agent restart: match the checkpointed pod records with what the runtime still has, so
 * running containers are adopted (same ids, same counts, same readiness) instead of started again.
 * Pure planning; the Kubelet applies the plan (adoption-apply.ts).
 *
 * The checkpoint can be one pass behind the runtime: an agent killed after a start and before
 * that pass's save leaves an attempt the records do not know, and it may have exited since. Such
 * an attempt is taken over from its labels (pod uid, container name, attempt number) whatever its
 * state: it becomes the container's current attempt, its exit is recorded, and the first sync
 * applies the restart policy to it like to any exit. Starting it again would run a container twice
 * under one attempt number. A pod the checkpoint lost entirely (killed before its first save) is
 * rebuilt from the manifest the container was started from, when that manifest is still wanted.
 *
 * What else changed while the agent was down is left to the first sync: a recorded attempt that
 * exited is noticed by the refresh with its real exit code and finish time, a removed manifest
 * stops its pod, a changed one replaces it.
 */
import type { PodKey, PodSpec } from "../../manifest/types.ts";
import { isOwnedBy, LABEL } from "../../runtime/labels.ts";
import type { ContainerInfo, SandboxInfo } from "../../runtime/runtime.ts";
import { backoffKey, type BackoffKey } from "../backoff.ts";
import { applyTermination, beginAttempt, exitEvent, terminationOf } from "../container-lifecycle.ts";
import type { EventType } from "../../v1/kube-event.ts";
import { allContainers, loadedPodRecord, newPodRecord, type ContainerRecord, type PodRecord } from "../pod-state.ts";

export interface AdoptionInput {
  /** The checkpoint: every pod record the previous agent saved. */
  records: PodRecord[];
  /** Everything the runtime has with minikubelet's labels. */
  containers: ContainerInfo[];
  sandboxes: SandboxInfo[];
  /** The first read of the manifest directory. */
  desired: Map<PodKey, PodSpec>;
  now: number;
  /**
   * The agent's --node. Containers and sandboxes labelled with another node belong to another
   * agent sharing the engine: neither adopted nor removed. Unset: everything labelled is ours.
   */
  node?: string;
  /**
   * The identity of the agent's database. What does not carry it was not created by this agent:
   * neither adopted nor removed. Unset: not checked.
   */
  database?: string;
}

/** An event to record once the plan is applied, on a container of an adopted pod. */
export interface AdoptionNote {
  podKey: PodKey;
  container: string;
  type: EventType;
  reason: "Adopted" | "Exited";
  message: string;
}

/** A restart a previous agent made but did not checkpoint: its back-off step is replayed. */
export interface ReplayedRestart {
  key: BackoffKey;
  /** The finish of the attempt before it, which the wait was measured from. */
  finishedAt: number;
  restartedAt: number;
}

export interface AdoptionPlan {
  pods: PodRecord[];
  /** Labelled containers nothing explains: to be stopped and removed. */
  orphans: ContainerInfo[];
  /** Older attempts of known containers beyond the one dead attempt kept for `logs --previous`. */
  superseded: ContainerInfo[];
  orphanSandboxes: SandboxInfo[];
  /**
   * Pods whose recorded sandbox the runtime does not list ready (its records lost to a reboot, its
   * pause container gone): their first pass asks the runtime for it, as the kubelet's
   * computePodActions finds no ready sandbox and makes a new one.
   */
  sandboxesToCheck: PodKey[];
  notes: AdoptionNote[];
  restarts: ReplayedRestart[];
}

export function planAdoption(input: AdoptionInput): AdoptionPlan {
  const pods = new Map<string, PodRecord>();
  for (const record of input.records) pods.set(record.spec.uid, loadedPodRecord(structuredClone(record)));
  const known = new Set<string>();
  for (const record of pods.values()) {
    for (const container of allContainers(record)) {
      for (const id of [container.containerId, container.previousContainerId, container.terminated?.containerId, container.lastTermination?.containerId]) {
        if (id) known.add(id);
      }
    }
  }
  const plan: AdoptionPlan = { pods: [], orphans: [], superseded: [], orphanSandboxes: [], sandboxesToCheck: [], notes: [], restarts: [] };
  const ours = (labels: Record<string, string>) => isOwnedBy(labels, { node: input.node, database: input.database });
  const byId = new Map(input.containers.map((info) => [info.id, info]));
  const unknown = input.containers
    .filter((info) => !known.has(info.id) && ours(info.labels))
    .sort((a, b) => attemptOf(a) - attemptOf(b));
  for (const info of unknown) {
    const uid = info.labels[LABEL.podUid] ?? "";
    const record = pods.get(uid) ?? lostPod(uid, info, input);
    if (record) pods.set(uid, record);
    const container = record && allContainers(record).find((c) => c.name === info.labels[LABEL.containerName]);
    if (!record || !container) {
      plan.orphans.push(info);
    } else if (attemptOf(info) < container.attempts) {
      plan.superseded.push(info);
    } else if (info.state === "created") {
      // Created and not started, as far as the list shows: but the previous agent may have been
      // killed with its start in flight, which the engine still carries out. The attempt may have
      // run, so it holds its number (the next start takes the next one) and it is stopped and removed.
      takeOver(record, container, info, byId, input.now, plan);
      endUnstarted(record, container, info, input.now, plan);
    } else {
      takeOver(record, container, info, byId, input.now, plan);
    }
  }
  plan.pods = [...pods.values()];
  for (const pod of plan.pods) {
    // A sandbox made in the pass the checkpoint missed belongs to its pod, not to the orphans.
    const sandbox = pod.sandbox ? undefined : input.sandboxes.find((s) => s.podUid === pod.spec.uid && ours(s.labels));
    if (sandbox) pod.sandbox = { id: sandbox.id, ip: sandbox.ip, podUid: sandbox.podUid };
  }
  const sandboxIds = new Set(plan.pods.map((p) => p.sandbox?.id));
  plan.orphanSandboxes = input.sandboxes.filter((s) => ours(s.labels) && !sandboxIds.has(s.id));
  const ready = new Set(input.sandboxes.filter((s) => s.ready).map((s) => s.id));
  plan.sandboxesToCheck = plan.pods.filter((p) => p.sandbox && !ready.has(p.sandbox.id)).map((p) => p.spec.key);
  return plan;
}

function attemptOf(info: ContainerInfo): number {
  return Number(info.labels[LABEL.attempt] ?? "-1");
}

/** The checkpoint lost this pod (a crash before its first save): rebuilt if it is still wanted. */
function lostPod(uid: string, info: ContainerInfo, input: AdoptionInput): PodRecord | undefined {
  const spec = [...input.desired.values()].find((s) => s.uid === uid && s.configHash === info.labels[LABEL.configHash]);
  if (!spec) return undefined;
  return newPodRecord(spec, input.now);
}

/** Makes `info` the container's current attempt, as the start the previous agent did not save would have. */
function takeOver(pod: PodRecord, container: ContainerRecord, info: ContainerInfo, byId: Map<string, ContainerInfo>, now: number, plan: AdoptionPlan): void {
  const note = (type: EventType, reason: AdoptionNote["reason"], message: string) => plan.notes.push({ podKey: pod.spec.key, container: container.name, type, reason, message });
  // The recorded attempt ended before this one started: its exit is in the runtime, or it is lost.
  if (container.state === "running" && container.containerId) {
    const previous = byId.get(container.containerId);
    // Still running beside its successor: a second copy, which must not run on.
    if (previous?.state === "running") plan.orphans.push(previous);
    const status = previous && previous.state !== "running" ? previous : { id: container.containerId, state: "unknown" as const };
    const ended = terminationOf(status, container.startedAt, now);
    applyTermination(container, ended);
    const exit = exitEvent(container.name, ended);
    note(exit.type, "Exited", exit.message);
  }
  // As startPlanned does before a restart: the ended attempt becomes the last termination, and
  // the dead container kept for `logs --previous`; the one kept before it goes.
  if (container.state === "terminated" && container.terminated) {
    const ended = container.terminated.containerId;
    if (ended && ended !== container.previousContainerId) {
      const older = container.previousContainerId && byId.get(container.previousContainerId);
      if (older) plan.superseded.push(older);
      container.previousContainerId = ended;
    }
    container.lastTermination = container.terminated;
  }
  const attempt = attemptOf(info);
  const startedAt = info.startedAt ?? now;
  if (attempt > 0) {
    plan.restarts.push({ key: backoffKey(pod.spec.uid, container.name), finishedAt: container.lastTermination?.finishedAt ?? startedAt, restartedAt: startedAt });
  }
  beginAttempt(container, attempt, info.id, startedAt);
  container.backoffAnnouncedFor = undefined;
  pod.startTime ??= startedAt;
  note("Normal", "Adopted", `Adopted container ${container.name} (${info.id}), attempt ${attempt}, that was started but not recorded before the agent stopped`);
  if (info.state === "exited" || info.state === "unknown") {
    const ended = terminationOf(info, startedAt, now);
    applyTermination(container, ended);
    const exit = exitEvent(container.name, ended);
    note(exit.type, "Exited", exit.message);
  }
}

/** Ends the taken-over attempt `info`, found created: lost like a container the runtime cannot account for, and removed. */
function endUnstarted(pod: PodRecord, container: ContainerRecord, info: ContainerInfo, now: number, plan: AdoptionPlan): void {
  const ended = terminationOf({ id: info.id, state: "unknown" }, container.startedAt, now);
  ended.message = "The container was created but not seen started when the agent stopped; it may have started since, and was removed";
  applyTermination(container, ended);
  const exit = exitEvent(container.name, ended);
  plan.notes.push({ podKey: pod.spec.key, container: container.name, type: exit.type, reason: "Exited", message: exit.message });
  plan.orphans.push(info);
}
