/**
 * The server-side pod printer behind `kubectl get pods`: NAME, READY, STATUS, RESTARTS, AGE and the
 * `-o wide` cells, computed the way `printPod` in Kubernetes' pkg/printers/internalversion does
 * (upstream master, including the "Completed hides a failed sibling" fix of PR #124766).
 * The algorithm in plain words is in the shared reference `kubectl-printer.md`; this module is pure:
 * the caller passes `now`, so AGE and `(12s ago)` are reproducible.
 */
import { humanDuration, parseTimestamp, timestampSince } from "./age.ts";
import type { V1Container, V1ContainerStateTerminated, V1ContainerStatus, V1Pod, V1PodCondition } from "../v1/v1.ts";

/** One pod's cells, already formatted as kubectl prints them. */
export interface PodRow {
  /** `default` when the object has no namespace. */
  namespace: string;
  name: string;
  /** `ready/total`, sidecar init containers included in both. */
  ready: string;
  /** The STATUS column: a phase, a container reason, `Init:1/2`, `Terminating`, ... */
  status: string;
  /** `3`, or `3 (12s ago)` when the latest restart's finish time is known. */
  restarts: string;
  age: string;
  /** `-o wide` cells: `<none>` when empty, exactly like kubectl. */
  ip: string;
  node: string;
  nominatedNode: string;
  readinessGates: string;
}

/** kubectl's reason for a pod whose node stopped reporting (node.NodeUnreachablePodReason). */
const NODE_LOST = "NodeLost";

/** Computes the printed row for `pod` as seen at `now` (epoch milliseconds). */
export function printPodRow(pod: V1Pod, now: number): PodRow {
  const columns = statusColumns(pod);
  const restarts =
    columns.restarts !== 0 && columns.lastRestart !== undefined
      ? `${columns.restarts} (${humanDuration(now - columns.lastRestart)} ago)`
      : String(columns.restarts);
  return {
    namespace: pod.metadata.namespace || "default",
    name: pod.metadata.name,
    ready: `${columns.ready}/${columns.total}`,
    status: columns.status,
    restarts,
    age: timestampSince(pod.metadata.creationTimestamp, now),
    ...wideCells(pod),
  };
}

/** The printer's raw results before formatting; exported for callers that need the numbers. */
export interface PodStatusColumns {
  ready: number;
  total: number;
  status: string;
  restarts: number;
  /** Epoch ms of the latest counted `lastState.terminated.finishedAt`, if any. */
  lastRestart: number | undefined;
}

/** READY, STATUS and RESTARTS as numbers and the reason string: the heart of printPod. */
export function statusColumns(pod: V1Pod): PodStatusColumns {
  const status = pod.status ?? {};
  const conditions = status.conditions ?? [];
  const initSpecs = pod.spec.initContainers ?? [];
  const sidecarSpecs = initSpecs.filter(isSidecar);
  const sidecarNames = new Set(sidecarSpecs.map((c) => c.name));

  let ready = 0;
  const total = pod.spec.containers.length + sidecarSpecs.length;
  let reason = status.reason || (status.phase ?? "");
  if (conditions.some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) reason = "SchedulingGated";

  const all = new RestartTally();
  const sidecars = new RestartTally();
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (const [index, container] of initStatuses.entries()) {
    all.add(container);
    // A status whose name is not in the spec counts as a plain init container.
    const sidecar = sidecarNames.has(container.name);
    if (sidecar) sidecars.add(container);
    const terminated = container.state?.terminated;
    const waiting = container.state?.waiting;
    if (terminated && exitCode(terminated) === 0) continue;
    if (sidecar && container.started === true) {
      if (container.ready) ready++;
      continue;
    }
    initializing = true;
    if (terminated) reason = `Init:${terminatedReason(terminated)}`;
    else if (waiting?.reason && waiting.reason !== "PodInitializing") reason = `Init:${waiting.reason}`;
    // i is the status's index but N is the spec's count, sidecars included.
    else reason = `Init:${index}/${initSpecs.length}`;
    break;
  }

  let counted = all;
  // A sidecar restarting after init ended stops the walk above, yet Initialized=True still lets
  // the app containers decide STATUS and READY.
  if (!initializing || hasCondition(conditions, "Initialized")) {
    // From here on, restarts of ordinary init containers no longer show; sidecar restarts do.
    counted = sidecars;
    let hasRunning = false;
    let errorReason = "";
    const containerStatuses = status.containerStatuses ?? [];
    // Walked from last to first so that the first container with a reason has the last word.
    for (let i = containerStatuses.length - 1; i >= 0; i--) {
      const container = containerStatuses[i]!;
      counted.add(container);
      const terminated = container.state?.terminated;
      const waiting = container.state?.waiting;
      if (waiting?.reason) {
        reason = waiting.reason;
      } else if (terminated) {
        reason = terminatedReason(terminated);
        if (exitCode(terminated) !== 0) errorReason = reason;
      } else if (container.ready && container.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === "Completed") {
      if (hasRunning && hasCondition(conditions, "Ready")) reason = "Running";
      else if (errorReason) reason = errorReason;
      else if (hasRunning) reason = "NotReady";
    }
  }

  if (pod.metadata.deletionTimestamp && status.reason === NODE_LOST) reason = "Unknown";
  else if (pod.metadata.deletionTimestamp && status.phase !== "Succeeded" && status.phase !== "Failed") reason = "Terminating";

  return { ready, total, status: reason, restarts: counted.count, lastRestart: counted.latest };
}

/** Restart count plus the latest previous-termination finish time over the containers added. */
class RestartTally {
  count = 0;
  latest: number | undefined;

  add(container: V1ContainerStatus): void {
    this.count += container.restartCount ?? 0;
    const finished = container.lastState?.terminated ? parseTimestamp(container.lastState.terminated.finishedAt) : undefined;
    if (finished !== undefined && (this.latest === undefined || finished > this.latest)) this.latest = finished;
  }
}

function isSidecar(container: V1Container): boolean {
  return container.restartPolicy === "Always";
}

/** `Error`, `OOMKilled`...; with no reason, `Signal:9` or `ExitCode:3`. */
function terminatedReason(terminated: V1ContainerStateTerminated): string {
  if (terminated.reason) return terminated.reason;
  if (terminated.signal) return `Signal:${terminated.signal}`;
  return `ExitCode:${exitCode(terminated)}`;
}

/** Hand-written objects may leave out exitCode; the API's zero value is 0. */
function exitCode(terminated: V1ContainerStateTerminated): number {
  return terminated.exitCode ?? 0;
}

function hasCondition(conditions: V1PodCondition[], type: string): boolean {
  return conditions.some((c) => c.type === type && c.status === "True");
}

function wideCells(pod: V1Pod): Pick<PodRow, "ip" | "node" | "nominatedNode" | "readinessGates"> {
  const status = pod.status ?? {};
  // The API fills podIPs from podIP when converting; objects we build may carry only podIP.
  const ip = status.podIPs?.[0]?.ip || status.podIP || "<none>";
  const gates = pod.spec.readinessGates ?? [];
  let readinessGates = "<none>";
  if (gates.length > 0) {
    const conditions = status.conditions ?? [];
    const passed = gates.filter((gate) => conditions.find((c) => c.type === gate.conditionType)?.status === "True");
    readinessGates = `${passed.length}/${gates.length}`;
  }
  return {
    ip,
    node: pod.spec.nodeName || "<none>",
    nominatedNode: status.nominatedNodeName || "<none>",
    readinessGates,
  };
}
