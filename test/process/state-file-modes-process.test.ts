/**
 * The process runtime's files are its owner's alone (issue 26): the root, each pod's and container's
 * directory 0700; config.json (the env and the labels), `log` and its rotations (plain and gzipped)
 * 0600, with the agent under a umask of 022 as a login shell gives it; an older agent's 0755/0644
 * tree narrowed when a runtime starts on it. The container itself keeps the agent's umask.
 */
import { CRI_LOG_NAME, decodeCriLog } from "../../src/runtime/container-log-file.ts";
import { afterAll, afterEach, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { createRuntime } from "../../src/agent/runtime-choice.ts";
import { removeProcessState } from "../e2e/helpers.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { compressionDone, logFiles } from "../log-files.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

const cgroups = testCgroupIdentities();
const roots: string[] = [];
const umaskBefore = process.umask(0o022);
afterAll(() => {
  process.umask(umaskBefore);
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  cgroups.cleanup();
});

const open: { runtime: ProcessRuntime; id: string }[] = [];
afterEach(async () => {
  for (const { runtime, id } of open.splice(0)) {
    await runtime.removeContainer(id);
    await runtime.close();
  }
});

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/**
 * Runs one container to its end: five CRI records in 50-byte files, 3 kept, so one rotation is
 * gzipped (the lines come 0.1 s apart: a gzip has finished before its file is rotated away).
 */
async function runToEnd(root: string) {
  const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root), logPolicy: { maxBytes: 50, maxFiles: 3 } });
  const container = contractContainer("main", ["sh", "-c", "for line in aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd; do echo $line; sleep 0.1; done; echo eeee; umask >\"$HOME/umask-seen\""]);
  const pod = contractPod("modes", [container]);
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  open.push({ runtime, id });
  await waitForStatus(runtime, id, (status) => status.state === "exited");
  const podDir = join(root, "pods", pod.uid);
  const dir = join(podDir, "containers", id);
  // The monitor compresses in a gzip of its own, which may still run as the container ends.
  for (let i = 0; i < 300 && !compressionDone(dir); i++) await Bun.sleep(10);
  return { runtime, id, podDir, dir };
}

test("directories are 0700 and config.json, the log and its rotations 0600 under umask 022", async () => {
  const parent = mkdtempSync(join(tmpdir(), "minikubelet-modes-"));
  roots.push(parent);
  const root = join(parent, "state.db.runtime", "process");
  const { podDir, dir } = await runToEnd(root);

  const dirs = { root, pods: join(root, "pods"), events: join(root, "events"), pod: podDir, containers: join(podDir, "containers"), container: dir };
  expect(Object.fromEntries(Object.entries(dirs).map(([name, path]) => [name, modeOf(path)]))).toEqual(Object.fromEntries(Object.keys(dirs).map((name) => [name, "700"])));

  const logs = logFiles(dir);
  expect(logs.some((name) => name.endsWith(".gz"))).toBe(true);
  expect(logs.some((name) => name.startsWith(`${CRI_LOG_NAME}.`) && !name.endsWith(".gz"))).toBe(true);
  const files = ["config.json", ...logs, "sandbox.json"].map((name) => (name === "sandbox.json" ? join(podDir, name) : join(dir, name)));
  expect(files.map((file) => `${file.slice(dir.length)} ${modeOf(file)}`)).toEqual(files.map((file) => `${file.slice(dir.length)} 600`));
  // The container's own umask is the agent's, not the log writer's.
  expect(decodeCriLog(readFileSync(join(dir, CRI_LOG_NAME))).toString()).toBe("eeee\n");
  expect(readFileSync(join(podDir, "umask-seen"), "utf8")).toBe("0022\n");
});

test("a runtime starting on an older agent's 0755/0644 tree narrows its directories and container files", async () => {
  const parent = mkdtempSync(join(tmpdir(), "minikubelet-modes-"));
  roots.push(parent);
  const root = join(parent, "process");
  const { podDir, dir } = await runToEnd(root);
  const wide = [root, join(root, "pods"), podDir, join(podDir, "containers"), dir];
  for (const path of wide) chmodSync(path, 0o755);
  const files = readdirSync(dir).map((name) => join(dir, name));
  for (const file of files) chmodSync(file, 0o644);

  const next = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  await next.close();
  expect(wide.map(modeOf)).toEqual(wide.map(() => "700"));
  expect(files.map((file) => `${file} ${modeOf(file)}`)).toEqual(files.map((file) => `${file} 600`));
});

test("the agent's runtime root (state.db.runtime) an older agent left 0755 is 0700 once a runtime is chosen on it", async () => {
  const parent = mkdtempSync(join(tmpdir(), "minikubelet-modes-"));
  roots.push(parent);
  const root = join(parent, "state.db.runtime");
  mkdirSync(root);
  chmodSync(root, 0o755);
  const choice = await createRuntime({ kind: "process", root, owner: cgroups.ownerFor(join(root, "process")), node: "", dbPath: join(parent, "state.db"), logPolicy: { maxBytes: 1024, maxFiles: 2 }, podMaxPids: undefined, log: () => {} });
  await choice.runtime.close();
  removeProcessState(join(parent, "state.db"));
  expect({ root: modeOf(root), process: modeOf(join(root, "process")) }).toEqual({ root: "700", process: "700" });
});
