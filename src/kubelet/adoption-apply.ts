/**
 * Carries out an adoption plan (adoption.ts) before the first sync: the planned records become the
 * loop's pods with their runtime ids tracked, and what nothing explains is stopped and removed.
 */
import type { PodKey } from "../manifest/types.ts";
import { LABEL } from "../runtime/labels.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { AdoptionPlan } from "./adoption.ts";
import { allContainers, type PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

export interface AdoptionTarget {
  pods: Map<PodKey, PodRecord>;
  track: SyncContext["track"];
  event: SyncContext["event"];
  runtime: Pick<Runtime, "killContainer" | "removeContainer" | "removePodSandbox">;
  log: (message: string) => void;
}

export async function applyAdoption(plan: AdoptionPlan, target: AdoptionTarget): Promise<void> {
  for (const pod of plan.pods) {
    target.pods.set(pod.spec.key, pod);
    if (pod.sandbox) target.track(pod.sandbox.id, pod);
    for (const container of allContainers(pod)) {
      if (container.containerId) target.track(container.containerId, pod);
      if (container.state === "running") {
        target.event(pod, "Normal", "Adopted", container, `Adopted running container ${container.name} (${container.containerId}) after an agent restart`);
      }
    }
  }
  for (const note of plan.notes) {
    const pod = target.pods.get(note.podKey);
    const container = pod && allContainers(pod).find((c) => c.name === note.container);
    if (pod) target.event(pod, "Normal", "Adopted", container, note.message);
  }
  for (const orphan of plan.orphans) {
    const name = orphan.labels[LABEL.containerName] ?? orphan.id;
    const pod = `${orphan.labels[LABEL.podNamespace] ?? "?"}/${orphan.labels[LABEL.podName] ?? "?"}`;
    target.log(`removing container ${name} (${orphan.id}) of ${pod}: no pod explains it`);
    if (orphan.state === "running") await target.runtime.killContainer(orphan.id, "SIGKILL").catch(() => {});
    await target.runtime.removeContainer(orphan.id).catch((error) => target.log(`removing ${orphan.id}: ${errorMessage(error)}`));
  }
  for (const sandbox of plan.orphanSandboxes) {
    await target.runtime.removePodSandbox(sandbox.id).catch((error) => target.log(`removing sandbox ${sandbox.id}: ${errorMessage(error)}`));
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
