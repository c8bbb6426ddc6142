/**
 * ContainerRecord is a union by state: each transition replaces the state's fields whole, and a
 * checkpoint written before (with the fields of states a container had left) still loads.
 */
import { describe, expect, test } from "bun:test";
import { applyTermination, beginAttempt } from "../../src/kubelet/container-lifecycle.ts";
import { planAdoption } from "../../src/kubelet/adoption/adoption.ts";
import { loadedContainerRecord, newPodRecord, transition, type ContainerRecord } from "../../src/kubelet/pod-state.ts";
import { parseRecord, recordJson } from "../../src/store/pod-record-json.ts";
import { container, pod } from "../pod-builder.ts";

const T0 = 1_700_000_000_000;

describe("container record states", () => {
  test("a start, a stop and the wait for a restart each leave only their own state's fields", () => {
    const record = newPodRecord(pod({ containers: [container("app", { startupProbe: undefined })] }), T0).app[0]!;
    beginAttempt(record, 0, "c-0", T0);
    record.probeCounters = {};
    record.stopping = { cause: "liveness", startedAt: T0 + 5, graceMs: 30_000, stage: "sigterm", deadline: T0 + 30_005 };
    applyTermination(record, { containerId: "c-0", exitCode: 143, reason: "Error", finishedAt: T0 + 10 });
    expect(Object.keys(record).sort()).toEqual(["attempts", "containerId", "kind", "name", "ready", "spec", "started", "state", "terminated"]);
    expect(record.terminated?.killCause).toBe("liveness");
    record.lastTermination = record.terminated;
    transition(record, { state: "waiting", waiting: { reason: "CrashLoopBackOff" }, ready: false, started: false });
    expect(Object.keys(record).sort()).toEqual(["attempts", "containerId", "kind", "lastTermination", "name", "ready", "spec", "started", "state", "waiting"]);
    beginAttempt(record, 1, "c-1", T0 + 20);
    expect(record).toMatchObject({ state: "running", containerId: "c-1", startedAt: T0 + 20, attempts: 2, ready: true, started: true });
    expect("waiting" in record).toBe(false);
  });

  test("a checkpoint in the old shape loads: the fields of states the container left are dropped", () => {
    const spec = pod({ containers: [container("done"), container("again"), container("live")] });
    const saved = newPodRecord(spec, T0);
    const end = { containerId: "d-0", exitCode: 0, reason: "Completed", startedAt: T0, finishedAt: T0 + 5 };
    // What applyTermination and a restart left before this shape: the running attempt's fields stayed.
    const old = [
      { ...saved.app[0]!, state: "terminated", terminated: end, containerId: "d-0", attempts: 1, startedAt: T0, probeCounters: {}, ready: false, started: false },
      { ...saved.app[1]!, state: "waiting", waiting: { reason: "CrashLoopBackOff" }, lastTermination: { ...end, containerId: "a-0", exitCode: 1, reason: "Error" }, containerId: "a-0", previousContainerId: "a-0", attempts: 1, startedAt: T0 },
      { ...saved.app[2]!, state: "running", containerId: "l-0", attempts: 1, startedAt: T0, ready: true, started: true, probeCounters: {} },
    ];
    const row = recordJson({ ...saved, app: old as unknown as ContainerRecord[] });
    const parsed = parseRecord(row, JSON.stringify({ metadata: { name: "web" }, spec: {} }));
    const adopted = planAdoption({ records: [parsed], containers: [], sandboxes: [], desired: new Map(), now: T0 + 10 }).pods[0]!;
    const [done, again, live] = adopted.app;
    expect(done).toEqual({ name: "done", kind: "app", spec: spec.containers[0]!, attempts: 1, containerId: "d-0", state: "terminated", terminated: end, ready: false, started: false });
    expect(again!.state).toBe("waiting");
    expect(again!.startedAt).toBeUndefined();
    expect(again).toMatchObject({ waiting: { reason: "CrashLoopBackOff" }, previousContainerId: "a-0", lastTermination: { exitCode: 1 } });
    expect(live).toMatchObject({ state: "running", containerId: "l-0", startedAt: T0, ready: true, started: true, probeCounters: {} });
    // Loading is idempotent: a record in this shape loads as itself.
    for (const record of adopted.app) expect(loadedContainerRecord(record)).toEqual(record);
  });
});
