import { expect, test } from "bun:test";
import { VERSION } from "../../src/version.ts";
import { cpus } from "node:os";
import { nodeRoutes } from "../../src/api/resources/nodes-api.ts";
import { microTime } from "../../src/v1/time.ts";
import { containerRuntimeVersion, nodeObject, osImage, parseMeminfo, type HostFacts, type NodeOptions } from "../../src/node/node-object.ts";
import { NOTHING_RESERVED, parseReserved } from "../../src/eviction/node-allocatable.ts";
import { parseEvictionHard } from "../../src/eviction/thresholds.ts";
import { desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { apiContext, call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";

const GiKi = 1024 * 1024;
const healthy: HostFacts = {
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
  machineID: "m",
  systemUUID: "",
  bootID: "b",
};
const reservations = { evictionHard: parseEvictionHard(""), systemReserved: NOTHING_RESERVED, kubeReserved: NOTHING_RESERVED };
const options: NodeOptions = { name: "lab", uid: "u", createdAt: 0, heartbeatAt: 1000, liveness: "running", containerRuntimeVersion: "process://minikubelet", reservations };

function conditions(facts: HostFacts, liveness: NodeOptions["liveness"] = "running", more: Partial<NodeOptions> = {}) {
  const node = nodeObject(facts, { ...options, liveness, ...more }) as any;
  return Object.fromEntries(node.status.conditions.map((c: any) => [c.type, `${c.status} ${c.reason}`]));
}

test("pressure conditions follow the kubelet's hard eviction thresholds", () => {
  expect(conditions(healthy)).toEqual({
    MemoryPressure: "False KubeletHasSufficientMemory",
    DiskPressure: "False KubeletHasNoDiskPressure",
    PIDPressure: "False KubeletHasSufficientPID",
    Ready: "True KubeletReady",
  });
  expect(conditions({ ...healthy, memoryAvailableKi: 99 * 1024 }).MemoryPressure).toBe("True KubeletHasInsufficientMemory");
  expect(conditions({ ...healthy, memoryAvailableKi: 100 * 1024 }).MemoryPressure).toBe("False KubeletHasSufficientMemory");
  expect(conditions({ ...healthy, diskAvailableBytes: 9_900_000_000n }).DiskPressure).toBe("True KubeletHasDiskPressure");
  expect(conditions({ ...healthy, diskAvailableBytes: 10_000_000_000n }).DiskPressure).toBe("False KubeletHasNoDiskPressure");
  expect(conditions({ ...healthy, pidMax: 1000, processes: 950 }).PIDPressure).toBe("True KubeletHasInsufficientPID");
  expect(conditions(healthy, "not-serving").Ready).toBe("Unknown NodeStatusUnknown");
});

test("the thresholds are the agent's flags: memory.available and nodefs.available as given", () => {
  const flags = { reservations: { ...reservations, evictionHard: parseEvictionHard("memory.available<1Gi,nodefs.available<60%") } };
  expect(conditions({ ...healthy, memoryAvailableKi: 1023 * 1024 }, "running", flags).MemoryPressure).toBe("True KubeletHasInsufficientMemory");
  expect(conditions(healthy, "running", flags).DiskPressure).toBe("True KubeletHasDiskPressure");
});

test("DiskPressure is the agent's recorded verdict, with its transition time and the disk-pressure taint", () => {
  const since = Date.UTC(2026, 10, 30, 12, 0, 0);
  const node = nodeObject(healthy, { ...options, diskPressure: { pressure: true, since } }) as any;
  expect(node.status.conditions.find((c: any) => c.type === "DiskPressure")).toMatchObject({
    status: "True",
    reason: "KubeletHasDiskPressure",
    message: "kubelet has disk pressure",
    lastTransitionTime: "2026-11-30T12:00:00Z",
  });
  expect(node.spec).toEqual({ taints: [{ key: "node.kubernetes.io/disk-pressure", effect: "NoSchedule", timeAdded: "2026-11-30T12:00:00Z" }] });
  const cleared = nodeObject({ ...healthy, diskAvailableBytes: 0n }, { ...options, diskPressure: { pressure: false, since } }) as any;
  expect(cleared.status.conditions.find((c: any) => c.type === "DiskPressure").status).toBe("False");
  expect(cleared.spec).toEqual({});
});

test("capacity and allocatable: allocatable less the eviction thresholds", () => {
  const node = nodeObject(healthy, options) as any;
  expect(node.status.capacity).toEqual({ cpu: "4", "ephemeral-storage": `${100_000_000_000n / 1024n}Ki`, memory: `${8 * GiKi}Ki`, pods: "110" });
  expect(node.status.allocatable).toEqual({ cpu: "4", "ephemeral-storage": String(90e9), memory: `${8 * GiKi - 100 * 1024}Ki`, pods: "110" });
});

test("allocatable less --system-reserved and --kube-reserved", () => {
  const reserved = {
    ...reservations,
    systemReserved: parseReserved("--system-reserved", "cpu=500m,memory=1Gi,ephemeral-storage=10G"),
    kubeReserved: parseReserved("--kube-reserved", "cpu=500m"),
  };
  const node = nodeObject(healthy, { ...options, reservations: reserved }) as any;
  expect(node.status.allocatable).toEqual({ cpu: "3", "ephemeral-storage": String(80e9), memory: `${7 * GiKi - 100 * 1024}Ki`, pods: "110" });
  const half = nodeObject(healthy, { ...options, reservations: { ...reserved, kubeReserved: NOTHING_RESERVED } }) as any;
  expect(half.status.allocatable.cpu).toBe("3500m");
});

test("run --max-pods: the node reports the pods it admits, in capacity and allocatable", () => {
  const node = nodeObject(healthy, { ...options, maxPods: 1000 }) as any;
  expect([node.status.capacity.pods, node.status.allocatable.pods]).toEqual(["1000", "1000"]);
});

test("host facts parsers", () => {
  expect(parseMeminfo("MemTotal:       16314208 kB\nMemFree:  1 kB\nMemAvailable:   9000000 kB\n")).toMatchObject({ MemTotal: 16314208, MemAvailable: 9000000 });
  expect(osImage('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')).toBe("Debian GNU/Linux 12 (bookworm)");
  expect(osImage("")).toBe("Unknown");
  expect(microTime(Date.UTC(2026, 0, 1, 12, 0, 0, 123))).toBe("2026-01-01T12:00:00.123000Z");
});

test("the node as JSON and as a Table, read from this host; another name is NotFound", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web" })));
  using api = apiContext(h.dbPath, h.clock, { runtime: { name: "process" } });
  const node = (await call(nodeRoutes, "GET", "/api/v1/nodes/lab", api)).body;
  expect(node).toMatchObject({ kind: "Node", apiVersion: "v1", metadata: { name: "lab", labels: { "kubernetes.io/hostname": "lab" } } });
  expect(node.status.capacity.cpu).toBe(String(cpus().length));
  expect(node.status.capacity.memory).toMatch(/^\d+Ki$/);
  expect(node.status.addresses).toContainEqual({ type: "InternalIP", address: "127.0.0.1" });
  expect(node.status.nodeInfo).toMatchObject({ containerRuntimeVersion: `process://minikubelet-${VERSION}`, operatingSystem: "linux", kubeletVersion: "v1.37.2" });
  // Stable uid for the same database and name.
  expect((await call(nodeRoutes, "GET", "/api/v1/nodes/lab", api)).body.metadata.uid).toBe(node.metadata.uid);

  const list = await call(nodeRoutes, "GET", "/api/v1/nodes", api, { accept: TABLE_ACCEPT, query: { limit: "500" } });
  expect(list.body.columnDefinitions.map((c: any) => `${c.name}${c.priority ? "*" : ""}`)).toEqual([
    "Name",
    "Status",
    "Roles",
    "Age",
    "Version",
    "Internal-IP*",
    "External-IP*",
    "OS-Image*",
    "Kernel-Version*",
    "Container-Runtime*",
  ]);
  const cells = list.body.rows[0].cells;
  expect([cells[0], cells[1], cells[2], cells[5], cells[6], cells[9]]).toEqual(["lab", "Ready", "<none>", "127.0.0.1", "<none>", `process://minikubelet-${VERSION}`]);
  expect((await call(nodeRoutes, "GET", "/api/v1/nodes", api, { query: { fieldSelector: "metadata.name=other" } })).body.items).toEqual([]);
  expect(await call(nodeRoutes, "GET", "/api/v1/nodes/other", api)).toMatchObject({ status: 404, body: { message: 'nodes "other" not found' } });
  h.agent.close();
});

test("under serve (no runtime) the node is NotReady with Unknown, the runtime read from the recorded containers", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web" })));
  await h.advance(5);
  using api = apiContext(h.dbPath, h.clock);
  const node = (await call(nodeRoutes, "GET", "/api/v1/nodes/lab", api)).body;
  expect(node.status.conditions.find((c: any) => c.type === "Ready").status).toBe("Unknown");
  expect(node.status.nodeInfo.containerRuntimeVersion).toBe("fake://unknown");
  const row = (await call(nodeRoutes, "GET", "/api/v1/nodes", api, { accept: TABLE_ACCEPT })).body.rows[0];
  expect(row.cells[1]).toBe("NotReady");
  h.agent.close();
});

test("the node's Lease carries a six-digit MicroTime renewTime; another lease is NotFound", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  using api = apiContext(h.dbPath, h.clock, { runtime: { name: "process" } });
  const lease = await call(nodeRoutes, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/lab", api);
  expect(lease.body).toMatchObject({ kind: "Lease", apiVersion: "coordination.k8s.io/v1", metadata: { name: "lab", namespace: "kube-node-lease" }, spec: { holderIdentity: "lab", leaseDurationSeconds: 40 } });
  expect(lease.body.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const other = await call(nodeRoutes, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/x", api);
  expect(other).toMatchObject({ status: 404, body: { message: 'leases.coordination.k8s.io "x" not found' } });
  h.agent.close();
});

test("containerRuntimeVersion: the process runtime is minikubelet's version; an engine's is its own once it said it", () => {
  expect(containerRuntimeVersion("process")).toBe(`process://minikubelet-${VERSION}`);
  expect(containerRuntimeVersion("docker", "27.3.1")).toBe("docker://27.3.1");
  expect(containerRuntimeVersion("docker")).toBe("docker://unknown");
});
