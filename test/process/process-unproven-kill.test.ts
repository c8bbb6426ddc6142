/**
 * Fail closed on signals too: a container whose config.json (its labels) is corrupt, or whose pid file names no
 * process, is never signalled. The stop is refused with ContainerNotFoundError (the kubelet then
 * takes it for gone), its removal is refused, and a stranger its pid file names lives on.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { ContainerNotFoundError } from "../../src/runtime/runtime.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { processStartTicks } from "../../src/host/process-liveness.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function runningPod() {
  const root = mkdtempSync(join(tmpdir(), "mk-unproven-kill-"));
  const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  const spec = pod({ name: "web", containers: [container("web", { command: ["sleep", "30"] })] });
  const sandbox = await runtime.runPodSandbox(spec);
  const id = await runtime.startContainer({ pod: spec, container: spec.containers[0]!, kind: "app", attempt: 0, sandbox });
  const dir = join(root, "pods", spec.uid, "containers", id);
  const pid = (await runtime.containerStatus(id)).pid as number;
  const files = new Map<string, string>();
  const spoil = (name: string, content: string) => {
    files.set(name, readFileSync(join(dir, name), "utf8"));
    writeFileSync(join(dir, name), content);
  };
  cleanups.push(async () => {
    for (const [name, content] of files) writeFileSync(join(dir, name), content);
    await runtime.removePodSandbox(sandbox.id);
    await runtime.close();
    rmSync(root, { recursive: true, force: true });
  });
  return { runtime, sandbox, id, dir, pid, spoil };
}

/** An unrelated `sleep 30`, killed by the test. */
function stranger(): number {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  cleanups.push(() => {
    child.kill("SIGKILL");
  });
  return child.pid as number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("a corrupt config.json (the labels' record) and a pid file naming a stranger: neither the stranger nor the container is signalled, nothing is removed", async () => {
  const { runtime, sandbox, id, dir, pid, spoil } = await runningPod();
  const other = stranger();
  const ticks = processStartTicks(other) as string;
  spoil("pid", `${other} ${ticks} - ${other} ${ticks}\n`);
  spoil("config.json", "\u0000garbage{");

  const kill = runtime.killContainer(id, "SIGKILL");
  await expect(kill).rejects.toBeInstanceOf(ContainerNotFoundError);
  await expect(runtime.killContainer(id, "SIGKILL")).rejects.toThrow(join(dir, "config.json"));
  await expect(runtime.removeContainer(id)).rejects.toThrow(`container ${id}`);
  await expect(runtime.removePodSandbox(sandbox.id)).rejects.toThrow(`container ${id}`);
  expect(alive(other)).toBe(true);
  expect(alive(pid)).toBe(true);
  expect(existsSync(dir)).toBe(true);
});

test("a garbage pid file: the stop is refused as not found, the process lives on, and its directory is not removed", async () => {
  const { runtime, id, dir, pid, spoil } = await runningPod();
  spoil("pid", "garbage\n");

  await expect(runtime.killContainer(id, "SIGKILL")).rejects.toThrow(`container ${id}: ${join(dir, "pid")} does not name the container's process`);
  await expect(runtime.killContainer(id, "SIGTERM")).rejects.toBeInstanceOf(ContainerNotFoundError);
  await expect(runtime.removeContainer(id)).rejects.toThrow("not removed");
  expect(alive(pid)).toBe(true);
  expect(existsSync(dir)).toBe(true);
});

test("through the loop: a garbage pid file ends the pod's stop (ContainerStatusUnknown, one Warning) and leaves its process running", async () => {
  const root = mkdtempSync(join(tmpdir(), "mk-unproven-loop-"));
  const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  const h = realHarness(runtime);
  const web = pod({ name: "web", grace: 0, containers: [container("web", { command: ["sleep", "30"] })] });
  let dir = "";
  let pidText = "";
  cleanups.push(async () => {
    if (pidText && existsSync(dir)) writeFileSync(join(dir, "pid"), pidText);
    for (const sandbox of await runtime.listPodSandboxes()) await runtime.removePodSandbox(sandbox.id);
    await h.close();
    rmSync(root, { recursive: true, force: true });
  });
  await h.kubelet.sync(desired(web));
  await h.event((e) => e.reason === "Started");
  const id = (await runtime.listContainers())[0]!.id;
  const pid = (await runtime.containerStatus(id)).pid as number;
  dir = join(root, "pods", web.uid, "containers", id);
  pidText = readFileSync(join(dir, "pid"), "utf8");
  writeFileSync(join(dir, "pid"), "garbage\n");

  await h.kubelet.sync(desired());
  await h.event((e) => e.reason === "PodRemoved", 10_000, "PodRemoved");
  const exits = h.events.filter((e) => e.reason === "Exited");
  expect(exits.map((e) => [e.type, e.message])).toEqual([["Warning", expect.stringContaining("exited with code 137 (ContainerStatusUnknown): container")]]);
  expect(exits[0]!.message).toContain(join(dir, "pid"));
  expect(alive(pid)).toBe(true);
  expect(existsSync(dir)).toBe(true);
});
