/**
 * The process runtime with its records on a tmpfs apart from its root (process-files.ts), as the
 * agent runs it on a host with one: the whole runtime contract, where each file lands, and the
 * containers of an earlier version, whose records are under the root, adopted and removed.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeEvent } from "../../src/runtime/runtime.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { contractContainer, contractPod, runtimeContract, waitForLog, within } from "../runtime-contract.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { CRI_LOG_NAME } from "../../src/runtime/container-log-file.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const dirs: string[] = [];
function tempDir(parent: string): string {
  const dir = mkdtempSync(join(parent, "minikubelet-state-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A root on the disk and records on /dev/shm: two filesystems, as on the agent's host. */
function roots(): { rootDir: string; stateDir: string } {
  return { rootDir: tempDir(tmpdir()), stateDir: tempDir("/dev/shm") };
}

runtimeContract(
  "process, records on a tmpfs",
  (clock) => {
    const { rootDir, stateDir } = roots();
    return new ProcessRuntime({ rootDir, stateDir, owner: cgroups.ownerFor(rootDir), clock });
  },
  { image: "none" },
);

describe("process runtime, records on a tmpfs", () => {
  const open: ProcessRuntime[] = [];
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
  });
  function make(rootDir: string, stateDir?: string): ProcessRuntime {
    const runtime = new ProcessRuntime({ rootDir, stateDir, owner: cgroups.ownerFor(rootDir) });
    open.push(runtime);
    return runtime;
  }
  async function startIn(runtime: ProcessRuntime, command: string[]) {
    const container = contractContainer("main", command);
    const pod = contractPod("split", [container]);
    const sandbox = await runtime.runPodSandbox(pod);
    const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
    return { id, pod, sandbox };
  }

  test("a start writes its records and markers under the state directory, its log and nothing else under the root; removal takes both", async () => {
    const { rootDir, stateDir } = roots();
    const runtime = make(rootDir, stateDir);
    const { id, pod, sandbox } = await startIn(runtime, ["sh", "-c", "echo hello; sleep 30"]);
    await waitForLog(runtime, id, "hello");
    const records = join(stateDir, "pods", pod.uid, "containers", id);
    const logs = join(rootDir, "pods", pod.uid, "containers", id);
    expect(readdirSync(records).sort()).toEqual(["config.json", "monitor.err", "pid"]);
    expect(readdirSync(logs)).toEqual([CRI_LOG_NAME]);
    expect((await runtime.containerStatus(id)).logPath).toBe(join(logs, CRI_LOG_NAME));
    expect(existsSync(join(stateDir, "pods", pod.uid, "sandbox.json"))).toBe(true);
    expect(readdirSync(join(rootDir, "pods", pod.uid)).sort()).toEqual(["containers"]);
    expect(readdirSync(join(stateDir, "events"))).toEqual([`${id}.started`]);

    await runtime.killContainer(id, "SIGKILL");
    await within(2000, "the exit", (async () => {
      while ((await runtime.containerStatus(id)).state !== "exited") await Bun.sleep(10);
    })());
    expect(existsSync(join(records, "exit"))).toBe(true);
    await runtime.removeContainer(id);
    expect([existsSync(records), existsSync(logs), readdirSync(join(stateDir, "events"))]).toEqual([false, false, []]);
    await runtime.removePodSandbox(sandbox.id);
    expect([existsSync(join(rootDir, "pods", pod.uid)), existsSync(join(stateDir, "pods", pod.uid))]).toEqual([false, false]);
  });

  test("an earlier version's container, records and all under the root, is adopted: listed, read, its exit heard, its logs read, then removed", async () => {
    const { rootDir, stateDir } = roots();
    const earlier = make(rootDir);
    const { id, pod, sandbox } = await startIn(earlier, ["sh", "-c", "echo before; sleep 30"]);
    await waitForLog(earlier, id, "before");
    const { pid } = await earlier.containerStatus(id);
    await earlier.close();

    const runtime = make(rootDir, stateDir);
    expect((await runtime.listPodSandboxes()).map((s) => s.id)).toEqual([sandbox.id]);
    const adopted = (await runtime.listContainers()).find((c) => c.id === id);
    expect({ state: adopted?.state, pid: adopted?.pid }).toEqual({ state: "running", pid });
    expect(await runtime.readLogs(id)).toBe("before\n");

    const heard = new Promise<void>((resolve) =>
      runtime.watch((event: RuntimeEvent) => {
        if (event.type === "exited" && event.containerId === id) resolve();
      }),
    );
    await runtime.killContainer(id, "SIGTERM");
    await within(2000, "the exit of the adopted container", heard);
    expect((await runtime.containerStatus(id)).exitCode).toBe(143);

    // A new attempt in the same pod goes to the state directory, beside the earlier one's records.
    const container = contractContainer("main", ["sleep", "30"]);
    const next = await runtime.startContainer({ pod: { ...pod, containers: [container] }, container, kind: "app", attempt: 1, sandbox });
    expect(existsSync(join(stateDir, "pods", pod.uid, "containers", next, "pid"))).toBe(true);

    await runtime.removePodSandbox(sandbox.id);
    expect([existsSync(join(rootDir, "pods", pod.uid)), existsSync(join(stateDir, "pods", pod.uid))]).toEqual([false, false]);
    expect((await runtime.listContainers()).filter((c) => c.id === id || c.id === next)).toEqual([]);
  });
});
