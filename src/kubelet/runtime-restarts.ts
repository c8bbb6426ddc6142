/**
 * Containers the runtime restarted behind the kubelet's back (`docker restart ID`): the same id
 * runs again. The kubelet only counts restarts it makes, and its PLEG sees either
 * running -> running (it missed the exit) or running -> exited -> running (it saw the exit).
 *
 * The decision, per case:
 * - The loop never saw the exit (the container is running again when the pod is refreshed): it is
 *   the same attempt, so the restart count is unchanged, like the kubelet. The process is new, so
 *   its start time is taken from the runtime and readiness (and startup) must be proven again by
 *   the probes; a `Restarted` warning says what happened, since no counter shows it.
 * - The loop saw the exit (the `die` event came first): the exit was recorded and counted like any
 *   crash (an `Exited` event), and the restart is the kubelet's to make, through the restart policy
 *   and back-off. The revived old attempt is then a duplicate (the real kubelet would leave it
 *   running beside the new one; we never run two copies of a container) and is killed with SIGKILL.
 *   It stays as the dead container kept for `logs --previous` when it was that one. The new attempt
 *   can lose a race with the revived one for the pod's ports and exit; that exit is a crash like any
 *   other, so the pod settles on one copy with the count matching the attempts the loop made.
 */
import type { ContainerStatus } from "../runtime/runtime.ts";
import { allContainers, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";

/**
 * How much later than the loop's own record the runtime's start time must be to count as a
 * restart: the loop stamps a start after the runtime's call returns, and the process runtime
 * derives start times from /proc with about a second of error.
 */
export const RESTART_SLACK_MS = 2000;

/**
 * For a container the loop has as running and the runtime reports running: true (and the record
 * updated) when the runtime started it again since the loop last looked.
 */
export function noticeRestartInPlace(ctx: SyncContext, pod: PodRecord, container: ContainerRecord, status: ContainerStatus): boolean {
  if (status.state !== "running" || status.startedAt === undefined || container.startedAt === undefined) return false;
  if (status.startedAt <= container.startedAt + RESTART_SLACK_MS) return false;
  const id = container.containerId!;
  container.startedAt = status.startedAt;
  container.started = !container.spec.startupProbe;
  container.probeCounters = undefined;
  container.ready = container.started && !container.spec.readinessProbe;
  // The probe trackers start over for the new process (untrack forgets them; track keeps the id mapped).
  ctx.untrack(id);
  ctx.track(id, pod);
  ctx.event(
    pod,
    "Warning",
    "Restarted",
    container,
    `Container ${container.name} (${id.slice(0, 12)}) was restarted by the ${ctx.runtime.name} runtime, not by the kubelet; same container, restart count unchanged`,
  );
  return true;
}

/**
 * Kills attempts of this pod's containers that the runtime reported started but that are not the
 * attempt the loop runs now. `startedIds` holds the ids from `started` events; the pod's are
 * consumed. Resolves once each kill was sent; the exit arrives as a `die` like any other.
 */
export async function killRevivedAttempts(ctx: SyncContext, pod: PodRecord, startedIds: Set<string>): Promise<void> {
  for (const container of allContainers(pod)) {
    const current = container.state === "running" ? container.containerId : undefined;
    const old = [container.previousContainerId, container.terminated?.containerId, container.lastTermination?.containerId];
    if (current) startedIds.delete(current);
    for (const id of new Set(old)) {
      if (!id || id === current || !startedIds.delete(id)) continue;
      const status = await ctx.runtime.containerStatus(id);
      if (status.state !== "running") continue;
      ctx.event(
        pod,
        "Normal",
        "Killing",
        container,
        `Stopping container ${container.name}: its finished attempt ${id.slice(0, 12)} was restarted outside the kubelet${current ? ` while ${current.slice(0, 12)} runs` : ""}`,
      );
      await ctx.runtime.killContainer(id, "SIGKILL");
    }
  }
}
