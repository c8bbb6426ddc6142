/**
 * Carries out the plan's resizes (the kubelet's doPodResizeAction): each running container is given
 * its new cpu and memory through the runtime. A memory limit that goes down is checked against the
 * container's usage first, as the kubelet's validateMemoryLimitDecrease does: a limit at or below
 * what it uses would get it OOM-killed, so the resize stays in progress with the error instead
 * (PodResizeInProgress, reason Error; a ResizeError event when the error is new) and is tried again
 * on the next pass.
 */
import type { ContainerToResize } from "./compute-pod-actions.ts";
import { failResize, podGeneration, resizeSummary } from "./pod-resize.ts";
import { allContainers, type PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

export async function applyResizes(ctx: SyncContext, pod: PodRecord, resizes: readonly ContainerToResize[]): Promise<void> {
  const errors: string[] = [];
  for (const resize of resizes) {
    const container = allContainers(pod).find((c) => c.name === resize.name);
    if (!container || container.state !== "running") continue;
    const problem = await memoryLimitProblem(ctx, container.containerId, resize);
    if (problem) {
      errors.push(problem);
      continue;
    }
    try {
      await ctx.runtime.updateContainerResources?.(container.containerId, resize.resources);
      delete container.actuated;
    } catch (error) {
      errors.push(`failed to update resources of container ${JSON.stringify(resize.name)}: ${(error as Error).message}`);
    }
  }
  if (errors.length === 0) return;
  const message = errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
  if (failResize(pod, message, ctx.clock.now())) {
    ctx.event(pod, "Warning", "ResizeError", undefined, `Pod resize error: ${resizeSummary(pod.spec, podGeneration(pod.spec), message)}`);
  }
  // Nothing else wakes the pod for it: the next try comes with the next pass, as the kubelet's resync does.
  ctx.wakeAt(pod, ctx.clock.now() + RESIZE_RETRY_MS);
}

/** How soon a resize that could not be applied is tried again (the kubelet's periodic resync of the pod). */
const RESIZE_RETRY_MS = 10_000;

async function memoryLimitProblem(ctx: SyncContext, id: string, resize: ContainerToResize): Promise<string | undefined> {
  if (resize.lowersMemoryLimitTo === undefined) return undefined;
  const usage = await ctx.runtime.containerUsage?.(id);
  const used = usage?.memory?.usageBytes;
  if (used === undefined || BigInt(used) < resize.lowersMemoryLimitTo) return undefined;
  return `cannot decrease memory limits: attempting to set container ${JSON.stringify(resize.name)} memory limit (${resize.lowersMemoryLimitTo}) below current usage (${used})`;
}
