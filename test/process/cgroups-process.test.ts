/**
 * Cgroups on this machine's real hierarchy (v1 here; v2 is covered on a fake tree in
 * test/unit/cgroups.test.ts): a container over its memory limit is OOMKilled by the kernel and
 * reported so, one under it runs inside its cgroup, and the cgroup goes with the container.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Cgroups, detectHostCgroupMode } from "../../src/runtime/process/cgroups.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { statusColumns } from "../../src/printers/pod-printer.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { hostCgroupsMissing, removeIdentityCgroups } from "../host-cgroups.ts";
import { describeNeeding } from "../requirements.ts";

const mode = detectHostCgroupMode();
const cgroupsMissing = hostCgroupsMissing();
const owner = `test-${randomBytes(4).toString("hex")}`;
const memoryRoot = mode.kind === "v1" ? mode.memory : mode.kind === "v2" ? mode.root : "";
const cgroupOf = (id: string) => join(memoryRoot, "minikubelet", owner, id);
const limitFile = mode.kind === "v2" ? "memory.max" : "memory.limit_in_bytes";

const roots: string[] = [];
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), "mk-cgroups-"));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  await removeIdentityCgroups(owner);
});

/** Asks for 200 MiB at once, so a 16Mi limit is passed on the first allocation. */
const HOG = ["python3", "-c", "x = bytearray(200 * 1024 * 1024)"];

describeNeeding("cgroups on this host", cgroupsMissing, () => {
  test("a container over its memory limit is OOMKilled (137) from the cgroup's counter, also for a restarted agent; its cgroup goes with it", async () => {
    const rootDir = tempRoot();
    const runtime = new ProcessRuntime({ rootDir, owner });
    try {
      const hog = contractContainer("hog", HOG);
      hog.resources = { limits: { memory: "16Mi" }, requests: { memory: "16Mi" } };
      const hogPod = contractPod("hog", [hog]);
      const sandbox = await runtime.runPodSandbox(hogPod);
      const id = await runtime.startContainer({ pod: hogPod, container: hog, kind: "app", attempt: 0, sandbox });
      expect(readFileSync(join(cgroupOf(id), limitFile), "utf8").trim()).toBe("16777216");
      const status = await waitForStatus(runtime, id, (s) => s.state === "exited", 10_000);
      expect(status).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
      // A restarted agent reads the same counter: the reason survives adoption.
      const next = new ProcessRuntime({ rootDir, owner });
      try {
        expect((await next.listContainers()).map((c) => [c.id, c.reason])).toEqual([[id, "OOMKilled"]]);
        await next.removePodSandbox(sandbox.id);
      } finally {
        await next.close();
      }
      expect(existsSync(cgroupOf(id))).toBe(false);
    } finally {
      await runtime.close();
    }
  }, 20_000);

  test("a container under its limits runs inside its memory, cpu and pids cgroups; a SIGKILL is 137 without OOMKilled", async () => {
    const runtime = new ProcessRuntime({ rootDir: tempRoot(), owner, podPidsLimit: 32 });
    try {
      const small = contractContainer("small", ["python3", "-c", "import time; x = bytearray(1024 * 1024); print('ok', flush=True); time.sleep(60)"]);
      small.resources = { limits: { memory: "64Mi", cpu: "250m" }, requests: { memory: "64Mi", cpu: "250m" } };
      const smallPod = contractPod("small", [small]);
      const sandbox = await runtime.runPodSandbox(smallPod);
      const id = await runtime.startContainer({ pod: smallPod, container: small, kind: "app", attempt: 0, sandbox });
      const running = await runtime.containerStatus(id);
      expect(running.state).toBe("running");
      const members = readFileSync(join(cgroupOf(id), "cgroup.procs"), "utf8").split("\n");
      expect(members).toContain(String(running.pid));
      if (mode.kind === "v1" && mode.pids) {
        const pids = join(mode.pids, "minikubelet", owner, id);
        expect(readFileSync(join(pids, "pids.max"), "utf8").trim()).toBe("32");
        expect(readFileSync(join(pids, "cgroup.procs"), "utf8").split("\n")).toContain(String(running.pid));
      }
      if (mode.kind === "v1" && mode.cpu) {
        const cpu = join(mode.cpu, "minikubelet", owner, id);
        expect(["cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares"].map((file) => readFileSync(join(cpu, file), "utf8").trim())).toEqual(["25000", "100000", "256"]);
        expect(readFileSync(join(cpu, "cgroup.procs"), "utf8").split("\n")).toContain(String(running.pid));
      }
      await runtime.killContainer(id, "SIGKILL");
      const status = await waitForStatus(runtime, id, (s) => s.state === "exited", 10_000);
      expect(status.exitCode).toBe(137);
      expect(status.reason).toBeUndefined();
      await runtime.removeContainer(id);
      expect(existsSync(cgroupOf(id))).toBe(false);
    } finally {
      await runtime.close();
    }
  }, 20_000);

  test("the pod's STATUS is OOMKilled (restartPolicy Never), and OOMKilled with an OOMKilled last state while a restarted one waits out its back-off", async () => {
    const runtime = new ProcessRuntime({ rootDir: tempRoot(), owner });
    const h = realHarness(runtime);
    try {
      const resources = { limits: { memory: "16Mi" }, requests: { memory: "16Mi" } };
      const once = pod({ name: "once", restartPolicy: "Never", containers: [container("hog", { command: HOG, resources })] });
      const again = pod({ name: "again", containers: [container("hog", { command: HOG, resources })] });
      await h.kubelet.sync(desired(once, again));
      const exited = await h.event((e) => e.reason === "Exited" && e.pod === once.fullName, 10_000);
      expect(exited.message).toBe("Container hog exited with code 137 (OOMKilled)");
      await h.event((e) => e.reason === "BackOff" && e.pod === again.fullName, 15_000);
      await h.kubelet.idle();
      const view = (key: string) => servedPod(h.kubelet.pods.get(key)!, { runtimeName: "process" });
      expect(statusColumns(view(once.key)).status).toBe("OOMKilled");
      // The second kill is shown while its back-off runs; the first is the last state.
      const restarting = view(again.key);
      expect(statusColumns(restarting).status).toBe("OOMKilled");
      expect(restarting.status?.containerStatuses?.[0]?.state?.terminated?.reason).toBe("OOMKilled");
      expect(restarting.status?.containerStatuses?.[0]?.lastState?.terminated?.reason).toBe("OOMKilled");
    } finally {
      await h.close();
    }
  }, 30_000);
});

describeNeeding("the start-up sweep on this host", cgroupsMissing, () => {
  test("a leftover empty cgroup of this identity is removed in every hierarchy; a running container's is kept", async () => {
    const rootDir = tempRoot();
    const runtime = new ProcessRuntime({ rootDir, owner });
    const sleeper = contractContainer("sleeper", ["sleep", "30"]);
    sleeper.resources = { limits: { memory: "64Mi", cpu: "1" }, requests: { memory: "64Mi", cpu: "1" } };
    const spec = contractPod("kept", [sleeper]);
    const sandbox = await runtime.runPodSandbox(spec);
    const id = await runtime.startContainer({ pod: spec, container: sleeper, kind: "app", attempt: 0, sandbox });
    try {
      await waitForStatus(runtime, id, (s) => s.state === "running");
      // What a removal that met EBUSY leaves: the container gone, its empty cgroup still there.
      new Cgroups(mode, owner).create("leftover", { memoryBytes: 1n << 24n, cpuLimitMillis: 100n, pidsMax: 8 });
      const hierarchies = mode.kind === "v1" ? [mode.memory, mode.cpu, mode.pids].filter((root): root is string => root !== undefined) : memoryRoot ? [memoryRoot] : [];
      expect(hierarchies.some((root) => existsSync(join(root, "minikubelet", owner, "leftover")))).toBe(true);
      const next = new ProcessRuntime({ rootDir, owner });
      expect(next.sweptCgroups).toEqual(["leftover"]);
      for (const root of hierarchies) expect(existsSync(join(root, "minikubelet", owner, "leftover"))).toBe(false);
      expect(existsSync(cgroupOf(id))).toBe(true);
      expect((await next.containerStatus(id)).state).toBe("running");
      await next.close();
    } finally {
      await runtime.removeContainer(id);
      await runtime.removePodSandbox(sandbox.id);
      await runtime.close();
    }
  }, 20_000);
});

test("without writable cgroups the pod still runs, and each container with limits gets a Warning event", async () => {
  const reason = "cannot write cgroups: EROFS: read-only file system, mkdir '/sys/fs/cgroup/memory/minikubelet'";
  const runtime = new ProcessRuntime({ rootDir: tempRoot(), cgroups: new Cgroups({ kind: "unavailable", reason }, "db") });
  expect(runtime.cgroupProblem).toBe(reason);
  const h = realHarness(runtime);
  try {
    const resources = { limits: { memory: "16Mi" }, requests: { memory: "16Mi" } };
    const limited = pod({ name: "limited", containers: [container("app", { command: ["sleep", "30"], resources }), container("free", { command: ["sleep", "30"] })] });
    await h.kubelet.sync(desired(limited));
    await h.count((e) => e.reason === "Started", 2);
    const warnings = h.events.filter((e) => e.type === "Warning");
    expect(warnings.map((e) => [e.reason, e.container, e.message])).toEqual([
      ["LimitsNotEnforced", "app", `Resource limits of container app are not enforced: ${reason}`],
    ]);
    expect(h.kubelet.pods.get(limited.key)?.phase).toBe("Running");
  } finally {
    await h.close();
  }
}, 20_000);
