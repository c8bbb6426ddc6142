/**
 * The status patch node mode sends (PatchNodeStatus's two-way strategic merge patch), proved by
 * applying it as the API server's strategic merge does: the patched Node is the wanted one, and
 * what the patch leaves out (other writers' conditions, extended resources, images) survives.
 */
import { expect, test } from "bun:test";
import { strategicMergePatch } from "../../src/api/patch/strategic-merge.ts";
import { carryConditions, nodeStatusHasChanged, nodeStatusPatch, withDrawnStatus, type ClusterNode, type DrawnStatus } from "../../src/node/node-status.ts";
import { NODE_SCHEMA } from "../fake-cluster-api.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const held: ClusterNode = {
  metadata: { name: "n1", uid: "u", labels: { "kubernetes.io/os": "linux", team: "a" } },
  spec: { taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoSchedule" }] },
  status: {
    capacity: { cpu: "4", memory: "8Gi", "ephemeral-storage": "95G", "example.com/gpu": "1" },
    allocatable: { cpu: "4", memory: "8Gi", "ephemeral-storage": "95G" },
    conditions: [
      { type: "Ready", status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status.", lastHeartbeatTime: "2026-01-01T11:00:00Z", lastTransitionTime: "2026-01-01T11:01:00Z" },
      { type: "NetworkUnavailable", status: "False", reason: "RouteCreated", lastHeartbeatTime: "2026-01-01T11:00:00Z", lastTransitionTime: "2026-01-01T10:00:00Z" },
    ],
    addresses: [{ type: "InternalIP", address: "10.0.0.5" }, { type: "InternalIP", address: "10.0.0.6" }, { type: "Hostname", address: "n1" }],
    images: [{ names: ["busybox"], sizeBytes: 1 }],
  },
};
const drawn: DrawnStatus = {
  // 95G spelled as the drawing counts it: the same quantity, so no change.
  capacity: { cpu: "4", memory: "8Gi", "ephemeral-storage": "95000000000" },
  allocatable: { cpu: "3500m", memory: "8Gi", "ephemeral-storage": "95000000000" },
  conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" }],
  addresses: [{ type: "InternalIP", address: "127.0.0.1" }, { type: "Hostname", address: "n1" }],
  daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
  nodeInfo: { kubeletVersion: "v1.37.2" },
};

test("applied by the API server's rules, the patch gives the wanted Node and keeps what node mode does not own", () => {
  const wanted = withDrawnStatus(held, drawn, T0);
  const patch = nodeStatusPatch(held, wanted);
  expect(patch.spec).toBeUndefined();
  // The addresses whole, with the replace directive (two InternalIPs would merge into one by type).
  expect(patch.status.addresses).toEqual([...drawn.addresses, { $patch: "replace" }]);
  const applied = strategicMergePatch(held as never, patch as never, NODE_SCHEMA) as unknown as ClusterNode;
  expect(applied.status).toEqual(wanted.status as never);
  expect(applied.status!.capacity).toEqual({ cpu: "4", memory: "8Gi", "ephemeral-storage": "95G", "example.com/gpu": "1" });
  expect(applied.status!.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual(["Ready=True", "NetworkUnavailable=False"]);
  expect(applied.metadata.labels).toEqual({ "kubernetes.io/os": "linux", team: "a" });
});

test("a condition keeps its transition time while its status stays; every drawn one beats now", () => {
  const before = carryConditions([], [{ type: "Ready", status: "True" }, { type: "DiskPressure", status: "False" }], T0);
  const after = carryConditions(before, [{ type: "Ready", status: "True" }, { type: "DiskPressure", status: "True" }], T0 + 60_000);
  expect(after.map((c) => [c.type, c.lastTransitionTime, c.lastHeartbeatTime])).toEqual([
    ["Ready", "2026-01-01T12:00:00Z", "2026-01-01T12:01:00Z"],
    ["DiskPressure", "2026-01-01T12:01:00Z", "2026-01-01T12:01:00Z"],
  ]);
  // A heartbeat alone is no change; a transition is.
  expect(nodeStatusHasChanged({ conditions: before }, { conditions: carryConditions(before, [{ type: "Ready", status: "True" }, { type: "DiskPressure", status: "False" }], T0 + 60_000) })).toBe(false);
  expect(nodeStatusHasChanged({ conditions: before }, { conditions: after })).toBe(true);
});
