/**
 * Fail closed on ownership: a container whose config.json (its labels' record; labels.json for a
 * container of an earlier version), or a pod whose sandbox.json, is missing,
 * unreadable or corrupt cannot be proven this agent's, so it is neither listed (adoption neither
 * adopts nor removes it) nor removed, its process keeps running, and the runtime says so once per
 * directory however often it lists. A directory that is itself gone is still nothing to remove.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import type { Sandbox } from "../../src/runtime/runtime.ts";
import { container, pod } from "../pod-builder.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A runtime on a fresh root whose log lines are kept, with one pod running `sleep 30`. */
async function runningPod() {
  const root = mkdtempSync(join(tmpdir(), "mk-unproven-"));
  const said: string[] = [];
  const open = (): ProcessRuntime => {
    const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root), log: (line) => said.push(line) });
    cleanups.push(() => runtime.close());
    return runtime;
  };
  const runtime = open();
  const spec = pod({ name: "web", containers: [container("web", { command: ["sleep", "30"] })] });
  const sandbox: Sandbox = await runtime.runPodSandbox(spec);
  const id = await runtime.startContainer({ pod: spec, container: spec.containers[0]!, kind: "app", attempt: 0, sandbox });
  const podDir = join(root, "pods", spec.uid);
  const dir = join(podDir, "containers", id);
  const pid = (await runtime.containerStatus(id)).pid as number;
  const files = new Map<string, string>();
  /** Replaces (or, with undefined, deletes) a file; the afterEach puts it back and removes the pod. */
  const spoil = (file: string, content: string | undefined) => {
    files.set(file, readFileSync(file, "utf8"));
    if (content === undefined) rmSync(file);
    else writeFileSync(file, content);
  };
  cleanups.push(async () => {
    for (const [file, content] of files) if (existsSync(join(file, ".."))) writeFileSync(file, content);
    await runtime.removePodSandbox(sandbox.id);
    rmSync(root, { recursive: true, force: true });
  });
  return { runtime, open, said, sandbox, id, podDir, dir, pid, spoil };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("a corrupt config.json, which holds the labels: the container is not removed, not listed, keeps running, and is reported once", async () => {
  const { runtime, open, said, sandbox, id, dir, pid, spoil } = await runningPod();
  spoil(join(dir, "config.json"), `{"id": "${id}", "labels": {"io.minikubelet`);

  await expect(runtime.removeContainer(id)).rejects.toThrow(`container ${id}`);
  expect(existsSync(dir)).toBe(true);
  expect(alive(pid)).toBe(true);
  expect((await runtime.containerStatus(id)).state).toBe("running");
  // Its pod's removal would take the container with it: refused too, and the container stays.
  await expect(runtime.removePodSandbox(sandbox.id)).rejects.toThrow(`container ${id}`);
  expect(existsSync(dir)).toBe(true);
  expect(alive(pid)).toBe(true);

  for (let pass = 0; pass < 3; pass++) expect(await runtime.listContainers()).toEqual([]);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain(id);
  expect(said[0]).toContain(join(dir, "config.json"));

  // A restarted agent adopts from the same listing: it neither sees nor removes the container.
  const next = open();
  expect(await next.listContainers()).toEqual([]);
  expect(await next.listContainers()).toEqual([]);
  expect(said).toHaveLength(2);
  expect(alive(pid)).toBe(true);
});

test("a missing config.json is refused like a corrupt one; a container directory that is gone is nothing to remove", async () => {
  const { runtime, said, id, dir, pid, spoil } = await runningPod();
  spoil(join(dir, "config.json"), undefined);
  await expect(runtime.removeContainer(id)).rejects.toThrow(`container ${id}`);
  expect(alive(pid)).toBe(true);
  expect(await runtime.listContainers()).toEqual([]);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain("missing");

  await runtime.removeContainer("no-such-container");
});

test("a container of an earlier version, its labels in labels.json beside a record without them: ours while they read, refused once they do not", async () => {
  const { runtime, said, id, dir, pid, spoil } = await runningPod();
  const { labels, ...record } = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  spoil(join(dir, "config.json"), JSON.stringify(record));
  writeFileSync(join(dir, "labels.json"), JSON.stringify(labels));
  expect((await runtime.listContainers()).map((info) => [info.id, info.labels])).toEqual([[id, labels]]);

  spoil(join(dir, "labels.json"), '{"io.minikubelet');
  await expect(runtime.removeContainer(id)).rejects.toThrow(`container ${id}`);
  expect(alive(pid)).toBe(true);
  expect(await runtime.listContainers()).toEqual([]);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain(join(dir, "labels.json"));
});

test("a corrupt sandbox.json: the pod is not removed, not listed, its container keeps running, and it is reported once", async () => {
  const { runtime, said, sandbox, id, podDir, pid, spoil } = await runningPod();
  spoil(join(podDir, "sandbox.json"), '{"id": "x", "podUid": ');

  await expect(runtime.removePodSandbox(sandbox.id)).rejects.toThrow(`sandbox ${sandbox.id}`);
  expect(existsSync(podDir)).toBe(true);
  expect(alive(pid)).toBe(true);
  expect((await runtime.containerStatus(id)).state).toBe("running");

  for (let pass = 0; pass < 3; pass++) expect(await runtime.listPodSandboxes()).toEqual([]);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain(join(podDir, "sandbox.json"));
});

test("a missing sandbox.json is refused like a corrupt one; a pod directory that is gone is nothing to remove", async () => {
  const { runtime, said, sandbox, podDir, pid, spoil } = await runningPod();
  spoil(join(podDir, "sandbox.json"), undefined);
  await expect(runtime.removePodSandbox(sandbox.id)).rejects.toThrow(`sandbox ${sandbox.id}`);
  expect(existsSync(podDir)).toBe(true);
  expect(alive(pid)).toBe(true);
  expect(await runtime.listPodSandboxes()).toEqual([]);
  expect(await runtime.listPodSandboxes()).toEqual([]);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain("missing");

  await runtime.removePodSandbox("no-such-pod");
});
