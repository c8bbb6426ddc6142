/**
 * Real process runtimes for one test file: each in a temporary root with a cgroup owner of its own;
 * the containers a test tracks are removed (and their runtimes closed) after it, the roots and
 * cgroups after the file.
 */
import { afterAll, afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../src/runtime/process/process.ts";
import { testCgroupIdentities } from "./host-cgroups.ts";

export function processRuntimes(prefix: string) {
  const cgroups = testCgroupIdentities();
  const roots: string[] = [];
  const open: { runtime: ProcessRuntime; ids: string[] }[] = [];
  afterEach(async () => {
    for (const { runtime, ids } of open.splice(0)) {
      for (const id of ids) await runtime.removeContainer(id);
      await runtime.close();
    }
  });
  afterAll(async () => {
    for (const dir of roots) rmSync(dir, { recursive: true, force: true });
    await cgroups.cleanup();
  });
  const tempRoot = (): string => {
    const dir = mkdtempSync(join(tmpdir(), `minikubelet-${prefix}-`));
    roots.push(dir);
    return dir;
  };
  return {
    tempRoot,
    /** A runtime rooted in `root` (a new temporary one by default). */
    runtime: (root = tempRoot()): ProcessRuntime => new ProcessRuntime({ rootDir: join(root, "process"), owner: cgroups.ownerFor(root) }),
    /** Removes these containers of `runtime`, and closes it, after the test. */
    track: (runtime: ProcessRuntime, ...ids: string[]): void => void open.push({ runtime, ids }),
  };
}
