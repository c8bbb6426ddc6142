/**
 * Issue 26, a full disk under the process runtime, on a tmpfs of its own filled to the last byte:
 * a container's monitor survives (the output is dropped, said by one record once space returns,
 * and the log grows again), and a container killed meanwhile, whose monitor could not write its
 * exit file, is reported exited with its code and removed all the same.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { decodeCriLog } from "../../src/runtime/container-log-file.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { mountSmallFilesystem, type SmallFilesystem } from "../small-filesystem.ts";

const cgroups = testCgroupIdentities();
let disk: SmallFilesystem;
beforeAll(() => {
  disk = mountSmallFilesystem(4 << 20);
});
const open: { runtime: ProcessRuntime; id: string }[] = [];
afterEach(async () => {
  disk.free();
  for (const { runtime, id } of open.splice(0)) {
    await runtime.removeContainer(id);
    await runtime.close();
  }
});
afterAll(async () => {
  disk.unmount();
  await cgroups.cleanup();
});

async function start(runtime: ProcessRuntime, name: string, script: string) {
  const container = contractContainer("main", ["sh", "-c", script]);
  const pod = contractPod(name, [container]);
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  open.push({ runtime, id });
  return { id, log: (await runtime.containerStatus(id)).logPath! };
}

/** Polls until `condition` holds; real processes, so real time, bounded. */
async function until(what: string, condition: () => boolean, timeoutMs = 5000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/** 2 KB lines, tens a second even on a loaded host: what room the log's last page has fills at once. */
const LINES = `i=0; while :; do i=$((i+1)); echo "line $i ${"x".repeat(2000)}"; sleep 0.01; done`;

test("the log writer outlives a full disk: output is dropped and said so, and the log grows again once space is freed", async () => {
  const root = join(disk.path, "writer");
  const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root), clock: realClock });
  const { id, log } = await start(runtime, "chatty", LINES);
  const size = () => statSync(log).size;
  await until("some lines in the log", () => size() > 4000);

  disk.fill();
  // What the log's last page still has room for is written (a record cut short is cut off again,
  // and a later, shorter batch of records may still fit there); past that page nothing lands.
  let whileFull = size();
  await until("the log to stop growing", () => {
    const now = size();
    const stalled = now === whileFull;
    whileFull = now;
    return stalled;
  }, 5000, 300);
  await Bun.sleep(300);
  expect(size()).toBeLessThanOrEqual(Math.ceil(whileFull / 4096) * 4096);
  whileFull = size();
  expect((await runtime.containerStatus(id)).state).toBe("running");

  disk.free();
  const text = () => decodeCriLog(readFileSync(log)).toString();
  const MARKER = /^\[minikubelet\] container output dropped: the log could not be written \(no space left on device\?\); at least \d+ bytes lost$/m;
  await until("the drop said in the log, and the container's lines after it", () => {
    const found = MARKER.exec(text());
    return found !== null && text().slice(found.index).split("\n").filter((line) => line.startsWith("line ")).length >= 3;
  });
  // Said once, on a line of its own, however many reads were dropped.
  expect(text().split("\n").filter((line) => line.includes("[minikubelet]"))).toHaveLength(1);
  expect(size()).toBeGreaterThan(whileFull);
  expect((await runtime.containerStatus(id)).state).toBe("running");
});

test("a container stopped while the disk is full is reported exited with its code, which no file had room for, and is removed", async () => {
  const root = join(disk.path, "stop");
  const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root), clock: realClock });
  const { id, log } = await start(runtime, "victim", "exec sleep 600");
  const dir = dirname(log);
  disk.fill();
  await runtime.killContainer(id, "SIGKILL");
  const status = await waitForStatus(runtime, id, (s) => s.state === "exited");
  // The monitor names the code by a symlink, which needs no data block.
  expect(status).toMatchObject({ state: "exited", exitCode: 137 });
  expect(status.reason).toBeUndefined();
  // Every read agrees while the record cannot be written.
  expect((await runtime.containerStatus(id)).finishedAt).toBe(status.finishedAt);
  await runtime.removeContainer(id);
  expect(existsSync(dir)).toBe(false);
  open.splice(0);
  await runtime.close();
});
