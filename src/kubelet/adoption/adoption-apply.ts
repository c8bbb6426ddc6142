/**
 * Carries out an adoption plan (adoption.ts) before the first sync: the planned records become the
 * loop's pods with their runtime ids tracked, restarts the previous agent made but did not save
 * advance the back-off, and what nothing explains is stopped and removed.
 */
import type { PodKey } from "../../manifest/types.ts";
import { LABEL } from "../../runtime/labels.ts";
import type { ContainerInfo, Runtime } from "../../runtime/runtime.ts";
import type { AdoptionPlan } from "./adoption.ts";
import type { BackoffStore } from "../backoff.ts";
import { allContainers, type PodRecord } from "../pod-state.ts";
import type { SyncContext } from "../sync-context.ts";

export interface AdoptionTarget {
  pods: Map<PodKey, PodRecord>;
  track: SyncContext["track"];
  event: SyncContext["event"];
  backoff: Pick<BackoffStore, "next">;
  /** Checkpoints a pod as planned: the first sync may see a second exit, and a pass saves only one. */
  save: (pod: PodRecord) => void;
  runtime: Pick<Runtime, "killContainer" | "removeContainer" | "removePodSandbox">;
  log: (message: string) => void;
}

export async function applyAdoption(plan: AdoptionPlan, target: AdoptionTarget): Promise<void> {
  const noted = new Set(plan.notes.map((note) => `${note.podKey}/${note.container}`));
  for (const pod of plan.pods) {
    target.pods.set(pod.spec.key, pod);
    if (pod.sandbox) target.track(pod.sandbox.id, pod);
    for (const container of allContainers(pod)) {
      if (container.containerId) target.track(container.containerId, pod);
      if (container.state === "running" && !noted.has(`${pod.spec.key}/${container.name}`)) {
        target.event(pod, "Normal", "Adopted", container, `Adopted running container ${container.name} (${container.containerId}) after an agent restart`);
      }
    }
  }
  for (const note of plan.notes) {
    const pod = target.pods.get(note.podKey);
    const container = pod && allContainers(pod).find((c) => c.name === note.container);
    if (pod) target.event(pod, note.type, note.reason, container, note.message);
  }
  for (const restart of plan.restarts) target.backoff.next(restart.key, restart.finishedAt, restart.restartedAt);
  for (const pod of plan.pods) target.save(pod);
  for (const orphan of plan.orphans) {
    target.log(`removing container ${describe(orphan)}: no pod explains it`);
    await remove(orphan, target);
  }
  for (const old of plan.superseded) {
    target.log(`removing container ${describe(old)}: attempt ${old.labels[LABEL.attempt] ?? "?"} was superseded`);
    await remove(old, target);
  }
  for (const sandbox of plan.orphanSandboxes) {
    await target.runtime.removePodSandbox(sandbox.id).catch((error) => target.log(`removing sandbox ${sandbox.id}: ${errorMessage(error)}`));
  }
}

function describe(info: ContainerInfo): string {
  const name = info.labels[LABEL.containerName] ?? info.id;
  return `${name} (${info.id}) of ${info.labels[LABEL.podNamespace] ?? "?"}/${info.labels[LABEL.podName] ?? "?"}`;
}

async function remove(info: ContainerInfo, target: AdoptionTarget): Promise<void> {
  if (info.state === "running") await target.runtime.killContainer(info.id, "SIGKILL").catch(() => {});
  await target.runtime.removeContainer(info.id).catch((error) => target.log(`removing ${info.id}: ${errorMessage(error)}`));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
