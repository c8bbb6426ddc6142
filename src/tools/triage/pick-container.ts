/**
 * Which container `triage` explains when -c is not given: the one in trouble, the way kubectl's
 * STATUS column picks its reason (a blocking init container first, then the first container with a
 * waiting reason or a failed exit), falling back to restarts and readiness. Pure.
 */
import type { ContainerFacts } from "./facts.ts";

/** Waiting reasons that are progress, not trouble. */
const NORMAL_WAITING = new Set(["ContainerCreating", "PodInitializing"]);

/** Lower is worse; undefined is a container in no trouble. */
function severity(container: ContainerFacts, blocking: boolean): number | undefined {
  const status = container.status;
  if (!status) return undefined;
  const waiting = status.state?.waiting?.reason;
  const terminated = status.state?.terminated;
  const restarted = status.restartCount > 0 || status.lastState?.terminated !== undefined;
  const failed = (terminated && terminated.exitCode !== 0) || (waiting !== undefined && !NORMAL_WAITING.has(waiting));
  if (blocking && (failed || restarted)) return 0;
  if (waiting !== undefined && !NORMAL_WAITING.has(waiting)) return 1;
  if (terminated && terminated.exitCode !== 0) return 2;
  if (restarted) return 3;
  if (status.state?.running && !status.ready && container.kind !== "init") return 4;
  // An init container that keeps running holds the pod in Init:N/M (a wait-for loop that never ends).
  if (blocking && status.state?.running) return 5;
  return undefined;
}

/** The init container the pod waits for: the first one that has not exited 0 (a started sidecar does not block). */
export function blockingInit(containers: readonly ContainerFacts[], initialized: boolean): ContainerFacts | undefined {
  if (initialized) return undefined;
  for (const container of containers) {
    if (container.kind === "app") return undefined;
    const status = container.status;
    if (container.kind === "sidecar" ? status?.started === true : status?.state?.terminated?.exitCode === 0) continue;
    return container;
  }
  return undefined;
}

export interface ContainerPick {
  /** The container to explain: the one in most trouble, else the first app container. */
  name: string;
  /** Every container in trouble, worst first. */
  inTrouble: string[];
}

export function pickContainer(containers: readonly ContainerFacts[], initialized: boolean): ContainerPick {
  const blocking = blockingInit(containers, initialized);
  const ranked = containers
    .map((container, position) => ({ container, position, severity: severity(container, container === blocking) }))
    .filter((entry) => entry.severity !== undefined)
    .sort((a, b) => a.severity! - b.severity! || a.position - b.position);
  const fallback = containers.find((c) => c.kind === "app") ?? containers[0]!;
  return { name: ranked[0]?.container.name ?? fallback.name, inTrouble: ranked.map((entry) => entry.container.name) };
}
