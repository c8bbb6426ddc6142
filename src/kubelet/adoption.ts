/**
 * After an agent restart: match the checkpointed pod records with what the runtime still has, so
 * running containers are adopted (same ids, same counts, same readiness) instead of started again.
 * Pure planning; the Kubelet applies the plan. What changed while the agent was down is left to
 * the first sync, which handles it like any other change: a container that exited meanwhile is
 * noticed by the refresh with its real exit code and finish time, a removed manifest stops its
 * pod, a changed one replaces it.
 */
import type { PodKey, PodSpec } from "../manifest/types.ts";
import { isOwnedBy, LABEL } from "../runtime/labels.ts";
import type { ContainerInfo, SandboxInfo } from "../runtime/runtime.ts";
import { allContainers, newPodRecord, type ContainerRecord, type PodRecord } from "./pod-state.ts";

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

export interface AdoptionNote {
  podKey: PodKey;
  container: string;
  message: string;
}

export interface AdoptionPlan {
  pods: PodRecord[];
  /** Labelled containers nothing explains: to be stopped and removed. */
  orphans: ContainerInfo[];
  orphanSandboxes: SandboxInfo[];
  notes: AdoptionNote[];
}

export function planAdoption(input: AdoptionInput): AdoptionPlan {
  const pods = new Map<string, PodRecord>();
  for (const record of input.records) pods.set(record.spec.uid, structuredClone(record));
  const known = new Set<string>();
  for (const record of pods.values()) {
    for (const container of allContainers(record)) {
      for (const id of [container.containerId, container.previousContainerId, container.terminated?.containerId, container.lastTermination?.containerId]) {
        if (id) known.add(id);
      }
    }
  }
  const notes: AdoptionNote[] = [];
  const orphans: ContainerInfo[] = [];
  const ours = (labels: Record<string, string>) => isOwnedBy(labels, { node: input.node, database: input.database });
  for (const info of input.containers) {
    if (known.has(info.id) || !ours(info.labels)) continue;
    const uid = info.labels[LABEL.podUid] ?? "";
    const name = info.labels[LABEL.containerName] ?? "";
    const attempt = Number(info.labels[LABEL.attempt] ?? "-1");
    let record = pods.get(uid);
    if (!record) {
      // The checkpoint lost this pod (a crash before its first save): adopt it if it is still wanted.
      const spec = [...input.desired.values()].find((s) => s.uid === uid && s.configHash === info.labels[LABEL.configHash]);
      if (spec && info.state === "running") {
        record = newPodRecord(spec, input.now);
        const sandbox = input.sandboxes.find((s) => s.podUid === uid);
        if (sandbox) record.sandbox = { id: sandbox.id, ip: sandbox.ip, podUid: sandbox.podUid };
        pods.set(uid, record);
      }
    }
    const container = record && allContainers(record).find((c) => c.name === name);
    // Killed between "create" and "record": the runtime has the attempt the record was about to make.
    if (record && container && info.state === "running" && attempt === container.attempts && container.state !== "running") {
      adoptUnrecorded(container, info, attempt);
      notes.push({ podKey: record.spec.key, container: name, message: `Adopted container ${name} (${info.id}) that was started but not recorded before the agent stopped` });
      continue;
    }
    orphans.push(info);
  }
  const uids = new Set(pods.keys());
  const orphanSandboxes = input.sandboxes.filter((s) => ours(s.labels)).filter((s) => !uids.has(s.podUid) || [...pods.values()].every((p) => p.sandbox?.id !== s.id));
  return { pods: [...pods.values()], orphans, orphanSandboxes, notes };
}

function adoptUnrecorded(container: ContainerRecord, info: ContainerInfo, attempt: number): void {
  if (container.state === "terminated") container.lastTermination = container.terminated;
  container.terminated = undefined;
  container.state = "running";
  container.waiting = undefined;
  container.containerId = info.id;
  container.attempts = attempt + 1;
  container.restartCount = attempt;
  container.startedAt = info.startedAt;
  container.started = !container.spec.startupProbe;
  container.probeCounters = undefined;
  container.ready = container.started && !container.spec.readinessProbe;
}
