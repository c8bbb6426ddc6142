/**
 * What is left of a pod once its containers have stopped: its dead containers (the one kept for
 * `logs --previous` included) and its sandbox, removed from the runtime, each id forgotten first.
 * A removal the runtime refuses is said, never fatal: the pod is gone either way.
 */
import type { PodRecord } from "./pod-state.ts";
import { allContainers } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

export async function removePodFromRuntime(ctx: SyncContext, pod: PodRecord): Promise<void> {
  for (const container of allContainers(pod)) {
    for (const id of [container.containerId, container.previousContainerId]) {
      if (!id) continue;
      ctx.untrack(id);
      await ctx.runtime.removeContainer(id).catch((error) => ctx.log(`removing container ${id}: ${errorMessage(error)}`));
    }
  }
  if (pod.sandbox) {
    const id = pod.sandbox.id;
    ctx.untrack(id);
    await ctx.runtime.removePodSandbox(id).catch((error) => ctx.log(`removing sandbox ${id}: ${errorMessage(error)}`));
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
