/**
 * Real kubectl against `serve` (the database alone, no runtime): the node is NotReady with Ready
 * Unknown, and the pods, events and describe output are the recorded ones.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpus } from "node:os";
import { container, desired, pod } from "../pod-builder.ts";
import { recordDiskPressure, recordNodeStatus } from "../../src/store/node-status.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { describeWithKubectl, KUBECTL, KubectlSession, serveDatabase, type ServedApi } from "./harness.ts";

const dir = tempDir("minikubelet-kubectl-serve-objects-");
let h: ReturnType<typeof storeHarness>;
let api: ServedApi;
let session: KubectlSession;

beforeAll(async () => {
  h = storeHarness(dir.path);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", namespace: "default", containers: [container("crash")] }), pod({ name: "web", namespace: "default" })));
  await h.advance(60);
  h.kubelet.stop();
  // What an agent with --system-reserved cpu=500m recorded, and the DiskPressure its monitor saw last.
  recordNodeStatus(h.agent.db, { evictionHard: "memory.available<100Mi,nodefs.available<10%", systemReserved: "cpu=500m", kubeReserved: "", diskPressure: false, diskPressureSince: h.clock.now() }, h.clock.now());
  recordDiskPressure(h.agent.db, true, h.clock.now());
  api = serveDatabase(h.dbPath, { nodeName: "lab" });
  session = new KubectlSession(h.dbPath);
});

afterAll(async () => {
  await api?.stop();
  session?.[Symbol.dispose]();
  h?.agent.close();
  dir[Symbol.dispose]();
});

describeWithKubectl("kubectl against serve", KUBECTL.default, (kubectl) => {
  test("the node is NotReady (Ready Unknown); describe node lists the recorded pods", async () => {
    const nodes = await session.run(kubectl, ["get", "nodes"]);
    expect(nodes.stdout).toMatch(/^lab +NotReady +<none> /m);
    const described = await session.run(kubectl, ["describe", "node", "lab"]);
    expect(described.status).toBe(0);
    expect(described.stdout).toMatch(/Ready +Unknown .* NodeStatusUnknown/);
    expect(described.stdout).toContain("Non-terminated Pods:          (2 in total)");
  });

  test("describe node shows the recorded DiskPressure, its taint, and allocatable less --system-reserved", async () => {
    const described = await session.run(kubectl, ["describe", "node", "lab"]);
    expect(described.status).toBe(0);
    expect(described.stdout).toMatch(/^Taints: +node\.kubernetes\.io\/disk-pressure:NoSchedule$/m);
    expect(described.stdout).toMatch(/^ +DiskPressure +True .* KubeletHasDiskPressure +kubelet has disk pressure$/m);
    const allocatable = described.stdout.slice(described.stdout.indexOf("Allocatable:"));
    expect(allocatable).toMatch(new RegExp(`^ +cpu: +${cpus().length - 1}500m$`, "m"));
  });

  test("pods and events as recorded", async () => {
    const pods = await session.run(kubectl, ["get", "pods"]);
    // Its last exit, shown while the back-off it met runs.
    expect(pods.stdout).toMatch(/^crash-lab +0\/1 +Error +3 \(\S+ ago\) /m);
    expect(pods.stdout).toMatch(/^web-lab +1\/1 +Running +0 /m);
    const described = await session.run(kubectl, ["describe", "pod", "crash-lab"]);
    expect(described.stdout).toMatch(/Warning +BackOff .* kubelet +Back-off restarting failed container crash in pod crash-lab/);
    const events = await session.run(kubectl, ["events", "--for", "pod/web-lab"]);
    expect(events.stdout).toMatch(/Normal +Started +Pod\/web-lab +Started container web/);
  });
});
