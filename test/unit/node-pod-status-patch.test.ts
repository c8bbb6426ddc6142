/**
 * The pods/status patch as CreateTwoWayMergePatch builds it for v1.PodStatus: a table of
 * (old, new) -> patch, each case named.
 */
import { describe, expect, test } from "bun:test";
import { podStatusPatch } from "../../src/node/pod-status-patch.ts";
import { mergePodStatus } from "../../src/node/merge-pod-status.ts";
import type { V1PodStatus } from "../../src/v1/v1.ts";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const UID = "3ea60531-11f6-4fc9-b579-36e63c432597";
const ready = (status: string) => ({ type: "Ready", status, lastTransitionTime: "2026-01-01T12:00:00Z" });
const running = (name: string, restartCount: number) => ({ name, ready: true, restartCount, state: { running: { startedAt: "2026-01-01T12:00:00Z" } } });

const cases: { name: string; old: object | undefined; next: object; patch: Record<string, unknown> | undefined }[] = [
  { name: "nothing changed: no patch", old: { phase: "Running", conditions: [ready("True")] }, next: { phase: "Running", conditions: [ready("True")] }, patch: undefined },
  { name: "first status of a pod the API server left Pending", old: { phase: "Pending", qosClass: "BestEffort" }, next: { phase: "Running", qosClass: "BestEffort", podIP: "10.0.0.5" }, patch: { phase: "Running", podIP: "10.0.0.5" } },
  { name: "no status known yet: all of it", old: undefined, next: { phase: "Running" }, patch: { phase: "Running" } },
  {
    name: "a condition changes: only its changed fields, with its key, and the order",
    old: { conditions: [{ type: "Initialized", status: "True" }, ready("False")] },
    next: { conditions: [{ type: "Initialized", status: "True" }, { type: "Ready", status: "True", lastTransitionTime: "2026-01-01T12:01:00Z" }] },
    patch: { "$setElementOrder/conditions": [{ type: "Initialized" }, { type: "Ready" }], conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T12:01:00Z" }] },
  },
  {
    name: "a condition added",
    old: { conditions: [{ type: "PodScheduled", status: "True" }] },
    next: { conditions: [{ type: "PodScheduled", status: "True" }, ready("True")] },
    patch: { "$setElementOrder/conditions": [{ type: "PodScheduled" }, { type: "Ready" }], conditions: [ready("True")] },
  },
  {
    name: "a condition removed: a $patch delete by its key",
    old: { conditions: [{ type: "PodScheduled", status: "True" }, ready("True")] },
    next: { conditions: [ready("True")] },
    patch: { "$setElementOrder/conditions": [{ type: "Ready" }], conditions: [{ $patch: "delete", type: "PodScheduled" }] },
  },
  {
    name: "container statuses have no merge key in v1: the whole list is replaced",
    old: { containerStatuses: [running("a", 0), running("b", 0)] },
    next: { containerStatuses: [running("a", 0), running("b", 1)] },
    patch: { containerStatuses: [running("a", 0), running("b", 1)] },
  },
  {
    name: "podIPs merge by ip",
    old: { podIP: "10.0.0.5", podIPs: [{ ip: "10.0.0.5" }] },
    next: { podIP: "10.0.0.6", podIPs: [{ ip: "10.0.0.6" }] },
    patch: { podIP: "10.0.0.6", "$setElementOrder/podIPs": [{ ip: "10.0.0.6" }], podIPs: [{ ip: "10.0.0.6" }, { $patch: "delete", ip: "10.0.0.5" }] },
  },
  { name: "a field the new status lacks is removed", old: { phase: "Failed", reason: "UnsupportedPodSpec", message: "m" }, next: { phase: "Running" }, patch: { phase: "Running", reason: null, message: null } },
  { name: "nested objects diff field by field", old: { a: { x: 1, y: 2 } }, next: { a: { x: 1, y: 3 } }, patch: { a: { y: 3 } } },
];

describe("podStatusPatch: the two-way strategic merge patch of pods/status", () => {
  for (const c of cases) {
    test(c.name, () => {
      const patch = podStatusPatch(UID, c.old, c.next);
      expect(patch as unknown).toEqual(c.patch === undefined ? undefined : { metadata: { uid: UID }, status: c.patch });
    });
  }
});

describe("mergePodStatus: what the node owns and what it leaves to others", () => {
  test("a controller's condition and the scheduler's PodScheduled stay; the kubelet's conditions are the node's", () => {
    const server = {
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "True" }, { type: "DisruptionTarget", status: "True" }, ready("False")],
      nominatedNodeName: "n",
    } as V1PodStatus;
    const node = { phase: "Running", conditions: [{ type: "Initialized", status: "True" }, ready("True")] } as V1PodStatus;
    const merged = mergePodStatus(server, node, NOW);
    expect(merged.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual(["DisruptionTarget=True", "Initialized=True", "Ready=True", "PodScheduled=True"]);
    expect((merged as Record<string, unknown>).nominatedNodeName).toBe("n");
    expect(merged.phase).toBe("Running");
  });

  test("a pod bound by spec.nodeName (no scheduler) is reported scheduled, as the kubelet appends PodScheduled True", () => {
    const merged = mergePodStatus({ phase: "Pending" } as V1PodStatus, { phase: "Running", conditions: [ready("True")] } as V1PodStatus, NOW);
    expect(merged.conditions as unknown).toEqual([ready("True"), { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: "2026-01-01T12:00:00Z" }]);
  });

  test("readiness gates: Ready waits for each gate's condition, with the kubelet's reason and messages; it turns True once they are", () => {
    const LATER = NOW + 60_000;
    const node = { phase: "Running", conditions: [{ type: "ContainersReady", status: "True" }, ready("True")] } as V1PodStatus;
    const gates = ["example.com/feature-1", "example.com/feature-2"];
    const readyOf = (status: V1PodStatus) => status.conditions!.find((c) => c.type === "Ready") as unknown as Record<string, unknown>;

    const none = mergePodStatus({ phase: "Pending" } as V1PodStatus, node, NOW, gates);
    expect(readyOf(none)).toEqual({
      type: "Ready",
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: 'corresponding condition of pod readiness gate "example.com/feature-1" does not exist., corresponding condition of pod readiness gate "example.com/feature-2" does not exist.',
      lastTransitionTime: "2026-01-01T12:00:00Z",
    });
    const oneFalse = { ...none, conditions: [...none.conditions!, { type: "example.com/feature-1", status: "True" }, { type: "example.com/feature-2", status: "False" }] } as V1PodStatus;
    expect(readyOf(mergePodStatus(oneFalse, node, LATER, gates))).toMatchObject({ status: "False", message: 'the status of pod readiness gate "example.com/feature-2" is not "True", but False', lastTransitionTime: "2026-01-01T12:00:00Z" });
    const allTrue = { ...oneFalse, conditions: oneFalse.conditions!.map((c) => (c.type === "example.com/feature-2" ? { ...c, status: "True" } : c)) } as V1PodStatus;
    const merged = mergePodStatus(allTrue, node, LATER, gates);
    expect(readyOf(merged)).toEqual({ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T12:01:00Z" });
    // Without gates the node's Ready stands as it is.
    expect(readyOf(mergePodStatus({ phase: "Pending" } as V1PodStatus, node, NOW))).toEqual(ready("True"));
  });

  test("merged against itself, a status the API server acknowledged needs no patch", () => {
    const server = { phase: "Running", conditions: [ready("True"), { type: "PodScheduled", status: "True" }] } as V1PodStatus;
    const node = { phase: "Running", conditions: [ready("True")] } as V1PodStatus;
    expect(podStatusPatch(UID, server, mergePodStatus(server, node, NOW))).toBeUndefined();
  });
});
