/**
 * Issue 11: a process runtime never lists, adopts or removes a record another database's agent
 * wrote, even on one root (a copied database, a runtime root reached twice): it cannot prove it
 * created it. Also: two databases in one directory get two runtime roots.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { runtimeRootOf } from "../../src/store/db-path.ts";
import { container, pod } from "../pod-builder.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

test("another database's containers and sandboxes are invisible and cannot be removed", async () => {
  const root = mkdtempSync(join(tmpdir(), "mk-owner-"));
  roots.push(root);
  const first = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(`${root}#first`) });
  const second = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(`${root}#second`) });
  const spec = { ...pod({ name: "web", containers: [container("web", { command: ["sleep", "30"] })] }), volumes: [{ name: "data", type: "emptyDir" as const }] };
  const sandbox = await first.runPodSandbox(spec);
  const id = await first.startContainer({ pod: spec, container: spec.containers[0]!, kind: "app", attempt: 0, sandbox });
  try {
    expect(await second.listContainers()).toEqual([]);
    expect(await second.listPodSandboxes()).toEqual([]);
    await expect(second.removeContainer(id)).rejects.toThrow("not created by this agent's database");
    await expect(second.removePodSandbox(sandbox.id)).rejects.toThrow("not created by this agent's database");
    expect((await first.containerStatus(id)).state).toBe("running");
    expect(existsSync(join(root, "pods", spec.uid, "volumes", "data"))).toBe(true);
    expect((await first.listContainers()).map((c) => c.id)).toEqual([id]);
  } finally {
    await first.removePodSandbox(sandbox.id);
    await Promise.all([first.close(), second.close()]);
  }
});

test("each database has its own runtime root, next to it and named after it", () => {
  expect(runtimeRootOf("/srv/state/a.db")).toBe("/srv/state/a.db.runtime");
  expect(runtimeRootOf("/srv/state/a.db")).not.toBe(runtimeRootOf("/srv/state/b.db"));
});
