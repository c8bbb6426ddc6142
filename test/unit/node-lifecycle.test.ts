/**
 * Node mode's Node lifecycle against an in-memory API server on a fake clock: registration (new and
 * existing Node, back-off while the API server is away), the Lease (created owned by the Node,
 * renewed every 10 s, a Conflict re-got), the status (patched on change, every 5 minutes, at once
 * on a condition change, put right after the node-lifecycle controller marked it Unknown), and what
 * the operator reads when the API server goes, comes back, or refuses.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { NOTHING_RESERVED } from "../../src/eviction/node-allocatable.ts";
import { parseEvictionHard } from "../../src/eviction/thresholds.ts";
import { startNodeLifecycle, type NodeEvent, type NodeFactsSource, type NodeLifecycle } from "../../src/node/node-lifecycle.ts";
import type { HostFacts } from "../../src/node/node-object.ts";
import type { PlegHealth } from "../../src/pleg/pleg.ts";
import { isoTime } from "../../src/v1/time.ts";
import { FakeClock, advance } from "../fake-clock.ts";
import { FakeClusterApi } from "../fake-cluster-api.ts";

const GiKi = 1024 * 1024;
const FACTS: HostFacts = {
  cpus: 4,
  memoryTotalKi: 8 * GiKi,
  memoryAvailableKi: 4 * GiKi,
  ephemeralStorageBytes: 100_000_000_000n,
  diskAvailableBytes: 50_000_000_000n,
  pidMax: 4_194_304,
  processes: 300,
  hostname: "host",
  kernelVersion: "6.1.0",
  osImage: "Debian GNU/Linux 12 (bookworm)",
  operatingSystem: "linux",
  architecture: "amd64",
  machineID: "machine",
  systemUUID: "uuid",
  bootID: "boot",
};
const NODE_PATH = "/api/v1/nodes/n1";
const LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1";

/** Lets every promise the last timer started settle (the fake API answers in microtasks). */
const settle = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

interface Harness {
  clock: FakeClock;
  api: FakeClusterApi;
  lines: string[];
  pleg: PlegHealth;
  disk: { pressure: boolean; since: number } | undefined;
  lifecycle: NodeLifecycle;
  /** The Node's events, as reasons. */
  events: string[];
  step(ms: number): Promise<void>;
}

const running: NodeLifecycle[] = [];
afterEach(async () => {
  for (const lifecycle of running.splice(0)) await lifecycle.stop();
});

function harness(prepare: (api: FakeClusterApi, clock: FakeClock) => void = () => {}): Harness {
  const clock = new FakeClock();
  const api = new FakeClusterApi(clock);
  prepare(api, clock);
  const lines: string[] = [];
  const state = { pleg: { healthy: true, since: clock.now() } as PlegHealth, disk: undefined as Harness["disk"] };
  const source: NodeFactsSource = {
    facts: () => FACTS,
    reservations: { evictionHard: parseEvictionHard(""), systemReserved: NOTHING_RESERVED, kubeReserved: NOTHING_RESERVED },
    runtimeName: "process",
    engineVersion: () => undefined,
    pleg: () => state.pleg,
    diskPressure: () => state.disk,
    kubeletPort: () => 10250,
    nodeIP: "127.0.0.1",
  };
  const events: NodeEvent[] = [];
  const lifecycle = startNodeLifecycle({ client: api, server: "https://127.0.0.1:6443", nodeName: "n1", clock, log: (line) => lines.push(line), source, nodeEvent: (event) => events.push(event) });
  running.push(lifecycle);
  return {
    clock,
    api,
    lines,
    get pleg() {
      return state.pleg;
    },
    set pleg(value) {
      state.pleg = value;
    },
    get disk() {
      return state.disk;
    },
    set disk(value) {
      state.disk = value;
    },
    lifecycle,
    get events() {
      return events.map((event) => event.reason);
    },
    step: (ms) => advance(clock, ms, settle),
  };
}

const condition = (node: any, type: string) => node.status.conditions.find((c: any) => c.type === type);

describe("registration", () => {
  test("the Node's events: Starting, then each pressure condition as the kubelet's setters find it on the Node it registers; nothing more while nothing changes", async () => {
    const h = harness();
    await h.step(0);
    expect(h.events).toEqual(["Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"]);
    await h.step(60_000);
    expect(h.events).toHaveLength(4);
  });

  test("creates the Node with the kubelet's labels, addresses, resources and nodeInfo, then its Lease owned by it", async () => {
    const h = harness();
    await h.step(0);
    expect(h.api.requests[0]).toMatchObject({ method: "POST", path: "/api/v1/nodes" });
    // The Lease once the Node (its owner) exists: missing, so created.
    expect(h.api.requests.filter((r) => r.path.includes("leases")).map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${LEASE_PATH}`,
      "POST /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
    ]);
    const node = h.api.objects.get(NODE_PATH);
    expect(node.metadata.labels).toEqual({
      "beta.kubernetes.io/arch": "amd64",
      "beta.kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "kubernetes.io/hostname": "n1",
      "kubernetes.io/os": "linux",
    });
    expect(node.metadata.annotations).toEqual({ "volumes.kubernetes.io/controller-managed-attach-detach": "true" });
    expect(node.status.addresses).toEqual([
      { type: "InternalIP", address: "127.0.0.1" },
      { type: "Hostname", address: "n1" },
    ]);
    expect(node.status.capacity).toEqual({ cpu: "4", "ephemeral-storage": `${100_000_000_000n / 1024n}Ki`, memory: `${8 * GiKi}Ki`, pods: "110" });
    expect(node.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(node.status.nodeInfo).toMatchObject({ kubeletVersion: "v1.37.2", machineID: "machine", systemUUID: "uuid", bootID: "boot", containerRuntimeVersion: expect.stringMatching(/^process:\/\/minikubelet-/) });
    const now = isoTime(h.clock.now());
    expect(condition(node, "Ready")).toEqual({ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status", lastHeartbeatTime: now, lastTransitionTime: now });
    expect(node.status.conditions.map((c: any) => `${c.type}=${c.status} ${c.reason}`)).toEqual([
      "MemoryPressure=False KubeletHasSufficientMemory",
      "DiskPressure=False KubeletHasNoDiskPressure",
      "PIDPressure=False KubeletHasSufficientPID",
      "Ready=True KubeletReady",
    ]);
    const lease = h.api.objects.get(LEASE_PATH);
    expect(lease.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: "n1", uid: node.metadata.uid }]);
    expect(lease.spec).toEqual({ holderIdentity: "n1", leaseDurationSeconds: 40, renewTime: "2026-01-01T12:00:00.000000Z" });
    expect(h.lines).toEqual([`node n1: registered with the API server (uid ${node.metadata.uid})`]);
  });

  test("an existing Node keeps its uid, spec and other labels; the default labels and resources are put back by one status patch", async () => {
    const h = harness((api) => {
      api.objects.set(NODE_PATH, {
        metadata: { name: "n1", uid: "old-uid", resourceVersion: "7", labels: { "kubernetes.io/hostname": "elsewhere", team: "a" } },
        spec: { unschedulable: true },
        status: {},
      });
    });
    await h.step(0);
    const [patch] = h.api.sent("PATCH nodes/status");
    expect(h.api.requests[0]!.method).toBe("POST");
    expect(h.api.requests[1]).toMatchObject({ method: "GET", path: NODE_PATH });
    expect(patch!.contentType).toBe("application/strategic-merge-patch+json");
    expect(patch!.body.metadata.labels).toEqual({ "kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64" });
    const node = h.api.objects.get(NODE_PATH);
    expect(node.metadata.uid).toBe("old-uid");
    expect(node.metadata.labels.team).toBe("a");
    expect(node.spec).toEqual({ unschedulable: true });
    expect(h.api.objects.get(LEASE_PATH).metadata.ownerReferences[0].uid).toBe("old-uid");
    expect(h.lines[0]).toBe("node n1: registered before (uid old-uid); its labels and resources reconciled");
  });

  test("while the API server is away, registration retries on a back-off doubling to 7s, said in one line each way", async () => {
    const h = harness((api) => (api.down = true));
    await h.step(30_000);
    const attempts = h.api.sent("POST nodes").map((r) => r.at - h.api.requests[0]!.at);
    expect(attempts).toEqual([0, 200, 600, 1400, 3000, 6200, 12600, 19600, 26600]);
    h.api.down = false;
    await h.step(7000);
    expect(h.api.objects.get(NODE_PATH)).toBeDefined();
    expect(h.lines).toEqual([
      "node n1: lost the API server at https://127.0.0.1:6443 (POST /api/v1/nodes: Unable to connect. Is the computer able to access the url?); pods keep running, and what the node writes (its status, lease, pod statuses, events, mirror pods) is queued and catches up once it answers",
      "node n1: the API server answers again (after 34s without it)",
      expect.stringMatching(/^node n1: registered with the API server/),
    ]);
  });
});

describe("lease", () => {
  test("renewed every 10s from the Lease the API server returned", async () => {
    const h = harness();
    await h.step(0);
    await h.step(30_000);
    const renewals = h.api.sent("PUT leases");
    expect(renewals.map((r) => r.body.spec.renewTime)).toEqual(["2026-01-01T12:00:10.000000Z", "2026-01-01T12:00:20.000000Z", "2026-01-01T12:00:30.000000Z"]);
    // Each renewal carries the resourceVersion of the previous answer: no Conflict, no GET.
    expect(h.api.sent("GET leases")).toHaveLength(1);
  });

  test("a Conflict (another writer changed the Lease) gets it again and renews that", async () => {
    const h = harness();
    await h.step(0);
    h.api.edit(LEASE_PATH, (lease) => (lease.spec.holderIdentity = "n1"));
    await h.step(10_000);
    expect(h.api.requests.filter((r) => r.path.includes("leases")).slice(-3).map((r) => r.method)).toEqual(["PUT", "GET", "PUT"]);
    expect(h.api.objects.get(LEASE_PATH).spec.renewTime).toBe("2026-01-01T12:00:10.000000Z");
  });

  test("a deleted Lease is created again", async () => {
    const h = harness();
    await h.step(0);
    h.api.objects.delete(LEASE_PATH);
    await h.step(10_000);
    expect(h.api.objects.get(LEASE_PATH).spec).toMatchObject({ holderIdentity: "n1", renewTime: "2026-01-01T12:00:10.000000Z" });
  });
});

describe("node status", () => {
  test("computed every 10s, patched only when it changed or 5 minutes passed", async () => {
    const h = harness();
    await h.step(0);
    const first = h.api.sent("PATCH nodes/status").length;
    await h.step(290_000);
    expect(h.api.sent("PATCH nodes/status")).toHaveLength(first);
    await h.step(10_000);
    const patches = h.api.sent("PATCH nodes/status");
    expect(patches).toHaveLength(first + 1);
    // A heartbeat: each condition's lastHeartbeatTime, merged by type, in the Node's order.
    expect(patches.at(-1)!.body).toEqual({
      status: {
        "$setElementOrder/conditions": [{ type: "MemoryPressure" }, { type: "DiskPressure" }, { type: "PIDPressure" }, { type: "Ready" }],
        conditions: ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"].map((type) => ({ type, lastHeartbeatTime: "2026-01-01T12:05:00Z" })),
      },
    });
    expect(condition(h.api.objects.get(NODE_PATH), "Ready").lastTransitionTime).toBe("2026-01-01T12:00:00Z");
  });

  test("a DiskPressure change is patched at once, the other conditions keep their transition times", async () => {
    const h = harness();
    await h.step(0);
    await h.step(3000);
    h.disk = { pressure: true, since: h.clock.now() };
    h.lifecycle.conditionsChanged();
    await h.step(0);
    const node = h.api.objects.get(NODE_PATH);
    expect(condition(node, "DiskPressure")).toEqual({ type: "DiskPressure", status: "True", reason: "KubeletHasDiskPressure", message: "kubelet has disk pressure", lastHeartbeatTime: "2026-01-01T12:00:03Z", lastTransitionTime: "2026-01-01T12:00:03Z" });
    expect(condition(node, "Ready").lastTransitionTime).toBe("2026-01-01T12:00:00Z");
    expect(h.events.slice(4)).toEqual(["NodeHasDiskPressure"]);
  });

  test("an unhealthy PLEG makes the Node NotReady with the PLEG's message, at the next round", async () => {
    const h = harness();
    await h.step(0);
    h.pleg = { healthy: false, message: "pleg was last seen active 3m10s ago; threshold is 3m0s", since: h.clock.now() };
    await h.step(10_000);
    expect(condition(h.api.objects.get(NODE_PATH), "Ready")).toMatchObject({ status: "False", reason: "KubeletNotReady", message: "PLEG is not healthy: pleg was last seen active 3m10s ago; threshold is 3m0s", lastTransitionTime: "2026-01-01T12:00:10Z" });
    expect(h.events.slice(4)).toEqual(["NodeNotReady"]);
    h.pleg = { healthy: true, since: h.clock.now() };
    await h.step(10_000);
    expect(h.events.slice(4)).toEqual(["NodeNotReady", "NodeReady"]);
  });

  test("after the API server was away and the controller marked the Node Unknown, the next round reads the Node again and makes it Ready", async () => {
    const h = harness();
    await h.step(0);
    h.api.down = true;
    await h.step(60_000);
    h.api.down = false;
    // What kube-controller-manager's node-lifecycle controller writes when the Lease is not renewed.
    h.api.edit(NODE_PATH, (node) => {
      for (const c of node.status.conditions) Object.assign(c, { status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status.", lastTransitionTime: "2026-01-01T12:00:50Z" });
    });
    await h.step(10_000);
    const node = h.api.objects.get(NODE_PATH);
    expect(condition(node, "Ready")).toMatchObject({ status: "True", reason: "KubeletReady", lastTransitionTime: expect.stringMatching(/^2026-01-01T12:01:/) });
    expect(condition(node, "MemoryPressure")).toMatchObject({ status: "False", reason: "KubeletHasSufficientMemory" });
    // Each condition back from the controller's Unknown is told, as the kubelet's setters tell it.
    expect(h.events.slice(4)).toEqual(["NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"]);
    expect(h.api.sent("GET nodes").length).toBeGreaterThanOrEqual(1);
    expect(h.lines.filter((line) => line.includes("lost the API server"))).toHaveLength(1);
    expect(h.lines.filter((line) => line.includes("answers again"))).toHaveLength(1);
  });

  test("a removed kubernetes.io/os label is put back by the 5-minute report at the latest; a label of the admin's stays", async () => {
    const h = harness();
    await h.step(0);
    h.api.edit(NODE_PATH, (node) => {
      delete node.metadata.labels["kubernetes.io/os"];
      node.metadata.labels.team = "a";
    });
    await h.step(300_000);
    const nodeRequests = h.api.requests.filter((r) => r.path.startsWith(NODE_PATH));
    expect(nodeRequests.slice(-2).map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${NODE_PATH}`, `PATCH ${NODE_PATH}/status`]);
    expect(h.api.sent("PATCH nodes/status").at(-1)!.body.metadata).toEqual({ labels: { "kubernetes.io/os": "linux" } });
    expect(h.api.objects.get(NODE_PATH).metadata.labels).toMatchObject({ "kubernetes.io/os": "linux", team: "a" });
  });

  test("a 403 is one line naming the verb and the resource, not one per round", async () => {
    const h = harness();
    await h.step(0);
    h.api.forbidden.add("PATCH nodes/status");
    h.pleg = { healthy: false, message: "x", since: h.clock.now() };
    await h.step(60_000);
    expect(h.api.sent("PATCH nodes/status").length).toBeGreaterThan(3);
    expect(h.lines.filter((line) => line.includes("forbidden"))).toEqual([expect.stringMatching(/^node n1: forbidden: the API server refuses PATCH nodes\/status to this node: /)]);
  });
});

test("stop ends every round: no request after it", async () => {
  const h = harness();
  await h.step(0);
  await h.lifecycle.stop();
  const sent = h.api.requests.length;
  await h.step(60_000);
  expect(h.api.requests.length).toBe(sent);
  expect(h.clock.pendingTimers()).toBe(0);
});

test("stop aborts a request the API server does not answer, and says nothing of it", async () => {
  const h = harness();
  await h.step(0);
  h.api.hang = true;
  await h.step(10_000);
  const said = h.lines.length;
  await h.lifecycle.stop();
  expect(h.api.sent("PUT leases").length).toBeGreaterThan(0);
  expect(h.lines.length).toBe(said);
  expect(h.clock.pendingTimers()).toBe(0);
});
