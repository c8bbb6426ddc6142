/**
 * The pod printer against cases ported from Kubernetes' own printer tests (TestPrintPod,
 * TestPrintPodWithRestartableInitContainer, TestPrintPodwide, TestPrintPodConditions and the cases
 * added by PR #124766), rewritten as TypeScript objects, plus the edge cases the reference names.
 */
import { describe, expect, test } from "bun:test";
import { humanDuration, timestampSince } from "../../src/printers/age.ts";
import { printPodRow, type PodRow } from "../../src/printers/pod-printer.ts";
import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from "../../src/v1/v1.ts";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** An RFC 3339 time `ms` before NOW. */
function ago(ms: number): string {
  return new Date(NOW - ms).toISOString();
}

function unnamed(count: number): V1Container[] {
  return Array.from({ length: count }, () => ({ name: "" }));
}

const sidecar = (name: string): V1Container => ({ name, restartPolicy: "Always" });

interface PodInput {
  name?: string;
  containers?: number | V1Container[];
  initContainers?: number | V1Container[];
  deleting?: boolean;
  creationTimestamp?: string;
  status?: V1PodStatus;
}

function pod(input: PodInput): V1Pod {
  const list = (value: number | V1Container[] | undefined) => (typeof value === "number" ? unnamed(value) : value);
  return {
    metadata: {
      name: input.name ?? "test",
      ...(input.deleting ? { deletionTimestamp: ago(10 * SECOND) } : {}),
      ...(input.creationTimestamp ? { creationTimestamp: input.creationTimestamp } : {}),
    },
    spec: { containers: list(input.containers) ?? [], initContainers: list(input.initContainers) },
    status: input.status ?? {},
  };
}

/** A container status; `restartCount` and `ready` default to 0 and false like Go's zero values. */
function cs(fields: Partial<V1ContainerStatus> & { lastFinished?: number }): V1ContainerStatus {
  const { lastFinished, ...rest } = fields;
  return {
    name: "",
    ready: false,
    restartCount: 0,
    ...(lastFinished !== undefined ? { lastState: { terminated: { exitCode: 0, finishedAt: ago(lastFinished) } } } : {}),
    ...rest,
  };
}

const running = { running: {} };
const waiting = (reason?: string) => ({ waiting: reason === undefined ? {} : { reason } });
const terminated = (reason: string | undefined, exitCode: number, signal?: number) => ({
  terminated: { exitCode, ...(reason !== undefined ? { reason } : {}), ...(signal !== undefined ? { signal } : {}) },
});
const readyCondition: V1PodCondition = { type: "Ready", status: "True" };
const initialized = (status: "True" | "False"): V1PodCondition => ({ type: "Initialized", status });

/** [description, pod, [READY, STATUS, RESTARTS]] */
type Case = [string, V1Pod, [string, string, string]];

function runCases(cases: Case[]): void {
  for (const [name, input, expected] of cases) {
    test(name, () => {
      const row = printPodRow(input, NOW);
      expect([row.ready, row.status, row.restarts]).toEqual(expected);
    });
  }
}

describe("TestPrintPod", () => {
  runCases([
    [
      "ready count, restarts summed, made-up phase shown as-is",
      pod({ containers: 2, status: { phase: "podPhase", containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ restartCount: 3 })] } }),
      ["1/2", "podPhase", "6"],
    ],
    [
      "a container waiting reason overwrites the phase",
      pod({
        containers: 2,
        status: {
          phase: "podPhase",
          containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ restartCount: 3, state: waiting("ContainerWaitingReason") })],
        },
      }),
      ["1/2", "ContainerWaitingReason", "6"],
    ],
    [
      "the first container with a reason wins over later ones",
      pod({
        containers: 2,
        status: {
          phase: "podPhase",
          containerStatuses: [
            cs({ restartCount: 3, state: waiting("ContainerWaitingReason") }),
            cs({ restartCount: 3, state: terminated("ContainerTerminatedReason", 0) }),
          ],
        },
      }),
      ["0/2", "ContainerWaitingReason", "6"],
    ],
    [
      "ready without running is not counted",
      pod({ containers: 2, status: { phase: "podPhase", containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ ready: true, restartCount: 3 })] } }),
      ["1/2", "podPhase", "6"],
    ],
    [
      "status.reason replaces the phase",
      pod({
        containers: 2,
        status: { reason: "podReason", phase: "podPhase", containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ ready: true, restartCount: 3 })] },
      }),
      ["1/2", "podReason", "6"],
    ],
    [
      "one running and one completed, no Ready condition: NotReady",
      pod({
        containers: 2,
        status: { phase: "Running", containerStatuses: [cs({ ready: true, restartCount: 3, state: terminated("Completed", 0) }), cs({ ready: true, restartCount: 3, state: running })] },
      }),
      ["1/2", "NotReady", "6"],
    ],
    [
      "one running and one completed, Ready=True: Running",
      pod({
        containers: 2,
        status: {
          phase: "Running",
          conditions: [readyCondition],
          containerStatuses: [cs({ ready: true, restartCount: 3, state: terminated("Completed", 0) }), cs({ ready: true, restartCount: 3, state: running })],
        },
      }),
      ["1/2", "Running", "6"],
    ],
    [
      "an init container restarting: Init:0/1 with its restarts",
      pod({
        initContainers: 1,
        containers: 1,
        status: {
          phase: "podPhase",
          initContainerStatuses: [cs({ restartCount: 3, state: running, lastFinished: 10 * SECOND })],
          containerStatuses: [cs({ state: waiting() })],
        },
      }),
      ["0/1", "Init:0/1", "3 (10s ago)"],
    ],
    [
      "two init containers, the first restarting: Init:0/2",
      pod({
        initContainers: 2,
        containers: 1,
        status: {
          phase: "podPhase",
          initContainerStatuses: [cs({ restartCount: 3, state: running, lastFinished: 10 * SECOND }), cs({ state: waiting() })],
          containerStatuses: [cs({ state: waiting() })],
        },
      }),
      ["0/1", "Init:0/2", "3 (10s ago)"],
    ],
    [
      "first init done without restarts, second restarting: Init:1/2",
      pod({
        initContainers: 2,
        containers: 1,
        status: {
          phase: "podPhase",
          initContainerStatuses: [cs({ state: terminated(undefined, 0) }), cs({ restartCount: 3, state: running, lastFinished: 10 * SECOND })],
          containerStatuses: [cs({ state: waiting() })],
        },
      }),
      ["0/1", "Init:1/2", "3 (10s ago)"],
    ],
    [
      "while initializing, restarts of all init containers add up and the latest finish is shown",
      pod({
        initContainers: 2,
        containers: 1,
        status: {
          phase: "podPhase",
          initContainerStatuses: [
            cs({ restartCount: 2, state: terminated(undefined, 0), lastFinished: 2 * MINUTE }),
            cs({ restartCount: 3, state: running, lastFinished: 10 * SECOND }),
          ],
          containerStatuses: [cs({ state: waiting() })],
        },
      }),
      ["0/1", "Init:1/2", "5 (10s ago)"],
    ],
    [
      "once initialized, init container restarts drop out of the count",
      pod({
        initContainers: 1,
        containers: 1,
        status: {
          phase: "Running",
          initContainerStatuses: [cs({ restartCount: 2, state: terminated(undefined, 0), lastFinished: 2 * MINUTE })],
          containerStatuses: [cs({ restartCount: 4, state: running, lastFinished: 20 * SECOND })],
        },
      }),
      ["0/1", "Running", "4 (20s ago)"],
    ],
    [
      "a restart 5 days ago",
      pod({ containers: 1, status: { phase: "Running", containerStatuses: [cs({ ready: true, restartCount: 3, state: running, lastFinished: 5 * DAY })] } }),
      ["1/1", "Running", "3 (5d ago)"],
    ],
    [
      "one never restarted, the other 10 days ago",
      pod({
        containers: 2,
        status: { phase: "Running", containerStatuses: [cs({ ready: true, state: running }), cs({ ready: true, restartCount: 3, state: running, lastFinished: 10 * DAY })] },
      }),
      ["2/2", "Running", "3 (10d ago)"],
    ],
    [
      "the latest of two restart times is shown",
      pod({
        containers: 2,
        status: {
          phase: "Running",
          containerStatuses: [
            cs({ ready: true, restartCount: 6, state: running, lastFinished: 5 * DAY }),
            cs({ ready: true, restartCount: 3, state: running, lastFinished: 20 * DAY }),
          ],
        },
      }),
      ["2/2", "Running", "9 (5d ago)"],
    ],
    [
      "PodScheduled with reason SchedulingGated, whatever its status",
      pod({ containers: 2, status: { phase: "podPhase", conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulingGated" }] } }),
      ["0/2", "SchedulingGated", "0"],
    ],
    [
      "Succeeded with a completed container",
      pod({ containers: 1, status: { phase: "Succeeded", containerStatuses: [cs({ state: terminated("Completed", 0) })] } }),
      ["0/1", "Completed", "0"],
    ],
    [
      "Failed with an errored container",
      pod({ containers: 1, status: { phase: "Failed", containerStatuses: [cs({ state: terminated("Error", 1) })] } }),
      ["0/1", "Error", "0"],
    ],
    [
      "a terminal pod being deleted keeps Completed",
      pod({ deleting: true, containers: 1, status: { phase: "Succeeded", containerStatuses: [cs({ state: terminated("Completed", 0) })] } }),
      ["0/1", "Completed", "0"],
    ],
    [
      "a running pod being deleted: Terminating",
      pod({ deleting: true, containers: 1, status: { phase: "Running", containerStatuses: [cs({ state: running })] } }),
      ["0/1", "Terminating", "0"],
    ],
    ["a pending pod being deleted: Terminating", pod({ deleting: true, containers: 1, status: { phase: "Pending" } }), ["0/1", "Terminating", "0"]],
  ]);
});

describe("Completed does not hide a failed sibling (PR #124766)", () => {
  runCases([
    [
      "completed first, error second: Error",
      pod({ containers: 2, status: { phase: "Failed", containerStatuses: [cs({ state: terminated("Completed", 0) }), cs({ state: terminated("Error", 1) })] } }),
      ["0/2", "Error", "0"],
    ],
    [
      "the error reason is the first failed container's, however it is spelled",
      pod({
        containers: 3,
        status: {
          phase: "Failed",
          containerStatuses: [cs({ state: terminated("Completed", 0) }), cs({ state: terminated(undefined, 137, 9) }), cs({ state: terminated("OOMKilled", 137) })],
        },
      }),
      ["0/3", "Signal:9", "0"],
    ],
    [
      "Running with Ready=True still wins over an error",
      pod({
        containers: 3,
        status: {
          phase: "Running",
          conditions: [readyCondition],
          containerStatuses: [cs({ state: terminated("Completed", 0) }), cs({ ready: true, state: running }), cs({ state: terminated("Error", 2) })],
        },
      }),
      ["1/3", "Running", "0"],
    ],
    [
      "an error beats NotReady",
      pod({
        containers: 3,
        status: {
          phase: "Running",
          containerStatuses: [cs({ state: terminated("Completed", 0) }), cs({ ready: true, state: running }), cs({ state: terminated("Error", 2) })],
        },
      }),
      ["1/3", "Error", "0"],
    ],
  ]);
});

describe("TestPrintPodWithRestartableInitContainer", () => {
  const sidecars = [sidecar("restartable-init-1"), sidecar("restartable-init-2")];
  runCases([
    [
      "the first sidecar running but not started: Init:0/2, sidecars counted in READY's total",
      pod({
        initContainers: sidecars,
        containers: 1,
        status: {
          phase: "Pending",
          conditions: [initialized("False")],
          initContainerStatuses: [
            cs({ name: "restartable-init-1", restartCount: 3, state: running, started: false, lastFinished: 10 * SECOND }),
            cs({ name: "restartable-init-2", state: waiting(), started: false }),
          ],
          containerStatuses: [cs({ state: waiting() })],
        },
      }),
      ["0/3", "Init:0/2", "3 (10s ago)"],
    ],
    [
      "the first sidecar started, the second running but not started: Init:1/2",
      pod({
        initContainers: sidecars,
        containers: 1,
        status: {
          phase: "Pending",
          conditions: [initialized("False")],
          initContainerStatuses: [
            cs({ name: "restartable-init-1", restartCount: 3, state: running, started: true, lastFinished: 10 * SECOND }),
            cs({ name: "restartable-init-2", state: running, started: false }),
          ],
          containerStatuses: [cs({ state: waiting() })],
        },
      }),
      ["0/3", "Init:1/2", "3 (10s ago)"],
    ],
    [
      "both sidecars started and the app running: sidecar restarts keep counting",
      pod({
        initContainers: sidecars,
        containers: 1,
        status: {
          phase: "Running",
          conditions: [initialized("True")],
          initContainerStatuses: [
            cs({ name: "restartable-init-1", restartCount: 3, state: running, started: true, lastFinished: 10 * SECOND }),
            cs({ name: "restartable-init-2", state: running, started: true }),
          ],
          containerStatuses: [cs({ ready: true, restartCount: 4, state: running, lastFinished: 20 * SECOND })],
        },
      }),
      ["1/3", "Running", "7 (10s ago)"],
    ],
    [
      "sidecars killed and the app completed: Initialized=True lets the app decide",
      pod({
        initContainers: sidecars,
        containers: 1,
        status: {
          phase: "Succeeded",
          conditions: [initialized("True")],
          initContainerStatuses: [
            cs({ name: "restartable-init-1", restartCount: 3, state: terminated("Error", 137), started: false, lastFinished: 10 * SECOND }),
            cs({ name: "restartable-init-2", state: terminated("Error", 137), started: false }),
          ],
          containerStatuses: [cs({ restartCount: 4, state: terminated("Completed", 0), lastFinished: 20 * SECOND })],
        },
      }),
      ["0/3", "Completed", "7 (10s ago)"],
    ],
    [
      "statuses for init containers missing from the spec count as plain init containers",
      pod({
        initContainers: [{ name: "init1" }, sidecar("sidecar1")],
        containers: [{ name: "container1" }],
        status: {
          phase: "Running",
          initContainerStatuses: [cs({ name: "initinvalid" }), cs({ name: "init1" }), cs({ name: "sidecar1" })],
          containerStatuses: [cs({ name: "containerinvalid" }), cs({ name: "container1" })],
        },
      }),
      ["0/2", "Init:0/2", "0"],
    ],
    [
      "a sidecar crash-looping after init: its reason shows, Initialized=True still counts the app",
      pod({
        initContainers: [sidecar("proxy")],
        containers: 1,
        status: {
          phase: "Running",
          conditions: [initialized("True")],
          initContainerStatuses: [cs({ name: "proxy", restartCount: 2, started: false, state: waiting("CrashLoopBackOff"), lastFinished: 15 * SECOND })],
          containerStatuses: [cs({ ready: true, started: true, state: running })],
        },
      }),
      ["1/2", "Init:CrashLoopBackOff", "2 (15s ago)"],
    ],
    [
      "a started and ready sidecar counts as ready",
      pod({
        initContainers: [sidecar("proxy")],
        containers: 1,
        status: {
          phase: "Running",
          conditions: [initialized("True"), readyCondition],
          initContainerStatuses: [cs({ name: "proxy", ready: true, started: true, state: running })],
          containerStatuses: [cs({ ready: true, started: true, state: running })],
        },
      }),
      ["2/2", "Running", "0"],
    ],
  ]);
});

describe("reasons spelled by the printer", () => {
  runCases([
    [
      "a failed init container with a reason: Init:Error",
      pod({ initContainers: 1, containers: 1, status: { phase: "Failed", initContainerStatuses: [cs({ state: terminated("Error", 1) })] } }),
      ["0/1", "Init:Error", "0"],
    ],
    [
      "a failed init container without a reason, killed by a signal: Init:Signal:9",
      pod({ initContainers: 1, containers: 1, status: { phase: "Pending", initContainerStatuses: [cs({ state: terminated(undefined, 137, 9) })] } }),
      ["0/1", "Init:Signal:9", "0"],
    ],
    [
      "a failed init container without a reason or signal: Init:ExitCode:3",
      pod({ initContainers: 1, containers: 1, status: { phase: "Pending", initContainerStatuses: [cs({ state: terminated(undefined, 3) })] } }),
      ["0/1", "Init:ExitCode:3", "0"],
    ],
    [
      "an init container in back-off: Init:CrashLoopBackOff",
      pod({
        initContainers: 2,
        containers: 1,
        status: {
          phase: "Pending",
          initContainerStatuses: [cs({ restartCount: 4, state: waiting("CrashLoopBackOff"), lastFinished: 30 * SECOND }), cs({ state: waiting("PodInitializing") })],
          containerStatuses: [cs({ state: waiting("PodInitializing") })],
        },
      }),
      ["0/1", "Init:CrashLoopBackOff", "4 (30s ago)"],
    ],
    [
      "an init container waiting with PodInitializing: Init:0/1",
      pod({ initContainers: 1, containers: 1, status: { phase: "Pending", initContainerStatuses: [cs({ state: waiting("PodInitializing") })] } }),
      ["0/1", "Init:0/1", "0"],
    ],
    [
      "app containers waiting for init to finish show PodInitializing",
      pod({
        initContainers: 1,
        containers: 1,
        status: {
          phase: "Pending",
          initContainerStatuses: [cs({ state: terminated("Completed", 0) })],
          containerStatuses: [cs({ state: waiting("PodInitializing") })],
        },
      }),
      ["0/1", "PodInitializing", "0"],
    ],
    [
      "a container killed by a signal without a reason: Signal:15",
      pod({ containers: 1, status: { phase: "Failed", containerStatuses: [cs({ state: terminated(undefined, 143, 15) })] } }),
      ["0/1", "Signal:15", "0"],
    ],
    [
      "a container exited without a reason: ExitCode:2",
      pod({ containers: 1, status: { phase: "Failed", containerStatuses: [cs({ state: terminated(undefined, 2) })] } }),
      ["0/1", "ExitCode:2", "0"],
    ],
    [
      "a crash-looping container under Always: CrashLoopBackOff while the phase is Running",
      pod({ containers: 1, status: { phase: "Running", containerStatuses: [cs({ restartCount: 6, state: waiting("CrashLoopBackOff"), lastFinished: 2 * MINUTE + 5 * SECOND })] } }),
      ["0/1", "CrashLoopBackOff", "6 (2m5s ago)"],
    ],
    [
      "a deleted pod on a lost node: Unknown",
      pod({ deleting: true, containers: 1, status: { phase: "Running", reason: "NodeLost", containerStatuses: [cs({ ready: true, state: running })] } }),
      ["1/1", "Unknown", "0"],
    ],
    [
      "restarts without a known finish time have no suffix",
      pod({ containers: 1, status: { phase: "Running", containerStatuses: [cs({ ready: true, restartCount: 2, state: running })] } }),
      ["1/1", "Running", "2"],
    ],
    ["a pod with no status at all", { metadata: { name: "bare" }, spec: { containers: [{ name: "c" }] } }, ["0/1", "", "0"]],
  ]);
});

describe("TestPrintPodwide", () => {
  const gates = ["condition1", "condition2", "condition3"].map((conditionType) => ({ conditionType }));
  const wide = (row: PodRow) => [row.name, row.ready, row.status, row.restarts, row.age, row.ip, row.node, row.nominatedNode, row.readinessGates];

  test("node, first pod IP, nominated node and readiness gates", () => {
    const input: V1Pod = {
      metadata: { name: "test1" },
      spec: { containers: unnamed(2), nodeName: "test1", readinessGates: gates },
      status: {
        phase: "podPhase",
        conditions: [
          { type: "condition1", status: "False" },
          { type: "condition2", status: "True" },
        ],
        podIPs: [{ ip: "1.1.1.1" }, { ip: "2001:db8::" }],
        nominatedNodeName: "node1",
        containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ restartCount: 3 })],
      },
    };
    expect(wide(printPodRow(input, NOW))).toEqual(["test1", "1/2", "podPhase", "6", "<unknown>", "1.1.1.1", "test1", "node1", "1/3"]);
  });

  test("empty node and IP print <none>", () => {
    const input = pod({
      name: "test2",
      containers: 2,
      status: { phase: "podPhase", containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ restartCount: 3, state: waiting("ContainerWaitingReason") })] },
    });
    expect(wide(printPodRow(input, NOW))).toEqual(["test2", "1/2", "ContainerWaitingReason", "6", "<unknown>", "<none>", "<none>", "<none>", "<none>"]);
  });

  test("podIP alone is used when podIPs is absent", () => {
    const input = pod({ containers: 1, status: { phase: "Running", podIP: "10.0.0.7" } });
    expect(printPodRow(input, NOW).ip).toBe("10.0.0.7");
  });
});

describe("TestPrintPodConditions", () => {
  const statuses = [cs({ ready: true, restartCount: 3, state: running }), cs({ restartCount: 3 })];
  runCases([
    ["Running phase", pod({ containers: 2, status: { phase: "Running", containerStatuses: statuses } }), ["1/2", "Running", "6"]],
    ["Succeeded phase shows when no container has a reason", pod({ containers: 2, status: { phase: "Succeeded", containerStatuses: statuses } }), ["1/2", "Succeeded", "6"]],
    ["Failed phase shows when no container has a reason", pod({ containers: 2, status: { phase: "Failed", containerStatuses: statuses } }), ["1/2", "Failed", "6"]],
  ]);
});

describe("AGE", () => {
  test("comes from creationTimestamp, <unknown> without one", () => {
    expect(printPodRow(pod({ containers: 1, creationTimestamp: ago(5 * MINUTE + 10 * SECOND) }), NOW).age).toBe("5m10s");
    expect(printPodRow(pod({ containers: 1 }), NOW).age).toBe("<unknown>");
  });

  test("HumanDuration boundaries", () => {
    const cases: [number, string][] = [
      [-2 * SECOND, "<invalid>"],
      [-1999, "0s"],
      [0, "0s"],
      [999, "0s"],
      [59 * SECOND, "59s"],
      [119 * SECOND, "119s"],
      [2 * MINUTE, "2m"],
      [5 * MINUTE + 10 * SECOND, "5m10s"],
      [9 * MINUTE + 59 * SECOND, "9m59s"],
      [10 * MINUTE + 30 * SECOND, "10m"],
      [179 * MINUTE, "179m"],
      [3 * HOUR, "3h"],
      [3 * HOUR + 5 * MINUTE, "3h5m"],
      [7 * HOUR + 59 * MINUTE, "7h59m"],
      [8 * HOUR + 30 * MINUTE, "8h"],
      [47 * HOUR, "47h"],
      [2 * DAY, "2d"],
      [3 * DAY + 4 * HOUR, "3d4h"],
      [8 * DAY + 5 * HOUR, "8d"],
      [729 * DAY, "729d"],
      [730 * DAY, "2y"],
      [760 * DAY, "2y30d"],
      [8 * 365 * DAY + 40 * DAY, "8y"],
    ];
    expect(cases.map(([ms]) => humanDuration(ms))).toEqual(cases.map(([, text]) => text));
  });

  test("timestampSince treats null and garbage as unknown", () => {
    expect(timestampSince(null, NOW)).toBe("<unknown>");
    expect(timestampSince("yesterday-ish", NOW)).toBe("<unknown>");
    expect(timestampSince("2026-01-01T11:59:50Z", NOW)).toBe("10s");
  });
});
