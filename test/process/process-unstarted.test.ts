/**
 * An agent killed between launching a container's monitor and the monitor recording the pid leaves
 * a container with no pid yet whose process is about to run. The next agent must neither take it
 * for one that never ran (remove it, start the attempt again: the attempt runs twice) nor leave a
 * stray: listing waits for the monitor to report, and removing one kills whatever it started.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { monitorsOf } from "../../src/runtime/process/process-monitor.ts";
import { contractContainer, contractPod } from "../runtime-contract.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const roots: string[] = [];
const open: ProcessRuntime[] = [];
afterEach(async () => {
  for (const runtime of open.splice(0)) await runtime.close();
});
afterAll(() => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
});

/**
 * A runtime whose monitors wait for `gate` to exist before they start the process and record its
 * pid (a gate, not a delay: on a busy host a listing that scans /proc can take seconds).
 */
function slowStartingRuntime(root: string): ProcessRuntime {
  // Run as a child, not exec'd: while a process execs, its /proc cmdline reads empty for a moment,
  // and a listing that looked then saw no monitor and took the container for never started.
  const launcher = join(root, "slow-launcher");
  writeFileSync(launcher, `#!/bin/sh\nwhile [ ! -e ${gateOf(root)} ]; do sleep 0.05; done\n"$@"\n`);
  chmodSync(launcher, 0o755);
  const runtime = new ProcessRuntime({ rootDir: join(root, "process"), owner: cgroups.ownerFor(root), monitorTools: { launcher } });
  open.push(runtime);
  return runtime;
}

/** Starts a container on `dying` and returns once its monitor runs, before any pid is recorded. */
async function startThenDie(root: string, marker: string) {
  const dying = slowStartingRuntime(root);
  const container = contractContainer("main", ["sh", "-c", `echo ran >> ${marker}; exec sleep 30`]);
  const pod = contractPod("unstarted", [container]);
  const sandbox = await dying.runPodSandbox(pod);
  void dying.startContainer({ pod, container, kind: "app", attempt: 0, sandbox }).catch(() => {});
  const containers = join(root, "process", "pods", pod.uid, "containers");
  const launched = () => existsSync(containers) && readdirSync(containers).some((id) => monitorsOf(join(containers, id)).length > 0);
  while (!launched()) await Bun.sleep(5);
  return { pod };
}

function gateOf(root: string): string {
  return join(root, "gate");
}

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "minikubelet-unstarted-"));
  roots.push(root);
  return root;
}

test("a container whose pid was not yet recorded is listed as running once its monitor reports, not as never started", async () => {
  const root = tempRoot();
  const marker = join(root, "runs");
  await startThenDie(root, marker);
  const next = new ProcessRuntime({ rootDir: join(root, "process"), owner: cgroups.ownerFor(root) });
  open.push(next);
  // The monitor goes on while the new runtime lists (which waits for it to report).
  setTimeout(() => writeFileSync(gateOf(root), ""), 300);
  const [listed] = await next.listContainers();
  expect(listed?.state).toBe("running");
  // The shell's redirection makes the file before echo writes to it: wait for the line, not the file.
  const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");
  for (let i = 0; i < 500 && ran() === ""; i++) await Bun.sleep(10);
  expect(ran()).toBe("ran\n");
  await next.removeContainer(listed!.id);
});

test("removing such a container kills what its monitor starts: nothing runs on unseen", async () => {
  const root = tempRoot();
  const marker = join(root, "runs");
  await startThenDie(root, marker);
  const next = new ProcessRuntime({ rootDir: join(root, "process"), owner: cgroups.ownerFor(root), startTimeoutMs: 0 });
  open.push(next);
  const [listed] = await next.listContainers();
  expect(listed?.state).toBe("created");
  await next.removeContainer(listed!.id);
  await Bun.sleep(1000);
  expect(existsSync(marker)).toBe(false);
});
