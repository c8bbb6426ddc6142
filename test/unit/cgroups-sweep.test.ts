/**
 * Issue 14: at start the process runtime sweeps its own leftover cgroups (fake v1 and v2 trees):
 * an empty container cgroup under minikubelet/<its identity>/ whose container the runtime no longer
 * has is removed; a known container's (its OOM counter is still to be read), one with a process
 * inside, and every other identity's are left alone.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cgroups, detectCgroupMode } from "../../src/runtime/process/cgroups.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { fakeV1, fakeV2 } from "../cgroup-fixtures.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mk-sweep-"));
  temps.push(dir);
  return dir;
}

test.each([
  ["v1", (root: string) => fakeV1(root), (root: string) => [join(root, "memory"), join(root, "cpu"), join(root, "pids")]],
  ["v2", (root: string) => fakeV2(root), (root: string) => [root]],
] as const)("%s: only this identity's empty cgroups of containers it no longer has are removed", (_, fake, hierarchies) => {
  const root = tempDir();
  const mode = detectCgroupMode(fake(root));
  const mine = new Cgroups(mode, "db1");
  const theirs = new Cgroups(mode, "db2");
  mine.prepare();
  theirs.prepare();
  const limits = { memoryBytes: 1n << 24n, cpuLimitMillis: 500n, pidsMax: 10 };
  for (const id of ["gone", "known", "busy"]) mine.create(id, limits);
  theirs.create("other", limits);
  const busy = hierarchies(root).map((dir) => join(dir, "minikubelet", "db1", "busy", "cgroup.procs"));
  writeFileSync(busy[0]!, "4242\n");

  expect(mine.containerIds().sort()).toEqual(["busy", "gone", "known"]);
  expect(mine.sweep((id) => id === "known")).toEqual(["gone"]);
  for (const dir of hierarchies(root)) {
    expect(existsSync(join(dir, "minikubelet", "db1", "gone"))).toBe(false);
    expect(existsSync(join(dir, "minikubelet", "db1", "known"))).toBe(true);
    expect(existsSync(join(dir, "minikubelet", "db2", "other"))).toBe(true);
  }
  expect(existsSync(busy[0]!)).toBe(true);
});

test("a process runtime with an owner sweeps at start, keeping the cgroups of the containers in its root", async () => {
  const tree = tempDir();
  const mode = detectCgroupMode(fakeV1(tree));
  const rootDir = tempDir();
  const cgroupOf = (owner: string, id: string) => join(tree, "memory", "minikubelet", owner, id);
  const runtime = new ProcessRuntime({ rootDir, owner: "a".repeat(32), cgroups: new Cgroups(mode, "a".repeat(32)) });
  const pod = contractPod("sweep");
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container: contractContainer("done", ["true"]), kind: "app", attempt: 0, sandbox });
  await waitForStatus(runtime, id, (s) => s.state === "exited");
  await runtime.close();
  // A leftover of an earlier run (the container went, its cgroup's rmdir met EBUSY), and another agent's.
  new Cgroups(mode, "a".repeat(32)).create("leftover", {});
  new Cgroups(mode, "b".repeat(32)).create("leftover", {});

  const next = new ProcessRuntime({ rootDir, owner: "a".repeat(32), cgroups: new Cgroups(mode, "a".repeat(32)) });
  expect(next.sweptCgroups).toEqual(["leftover"]);
  expect(existsSync(cgroupOf("a".repeat(32), "leftover"))).toBe(false);
  expect(existsSync(cgroupOf("a".repeat(32), id))).toBe(true);
  expect(existsSync(cgroupOf("b".repeat(32), "leftover"))).toBe(true);
  await next.removeContainer(id);
  await next.close();

  // Without an owner the parent is "unowned", shared by any runtime without one: nothing is swept.
  new Cgroups(mode, "unowned").create("stray", {});
  const unowned = new ProcessRuntime({ rootDir: tempDir(), cgroups: new Cgroups(mode, "unowned") });
  expect(unowned.sweptCgroups).toEqual([]);
  expect(existsSync(cgroupOf("unowned", "stray"))).toBe(true);
  await unowned.close();
});
