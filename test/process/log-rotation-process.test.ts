/**
 * Container log rotation on the process runtime: the monitor rotates its CRI log as it fills,
 * keeps at most --container-log-max-files files (older rotated ones compressed), and loses or
 * repeats no line at the rotations, even under a container writing as fast as it can. The records
 * are on a tmpfs apart from the logs, as the agent keeps them (process-files.ts): a rotation never
 * moves a file between the two.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { ContainerLogPolicy } from "../../src/runtime/log-rotation-policy.ts";
import { CRI_LOG_NAME, decodeCriLog } from "../../src/runtime/container-log-file.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import { realClock } from "../../src/clock.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { compressionDone, logBytesOnDisk, logFiles } from "../log-files.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const roots: string[] = [];
function tempRoot(parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, "minikubelet-logrotate-"));
  roots.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
});

const open: { runtime: ProcessRuntime; id: string }[] = [];
afterEach(async () => {
  for (const { runtime, id } of open.splice(0)) {
    await runtime.removeContainer(id);
    await runtime.close();
  }
});

async function start(root: string, logPolicy: ContainerLogPolicy, command: string[]) {
  const runtime = new ProcessRuntime({ rootDir: root, stateDir: tempRoot("/dev/shm"), owner: cgroups.ownerFor(root), logPolicy });
  const container = contractContainer("main", command);
  const pod = contractPod("flood", [container]);
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  open.push({ runtime, id });
  return { runtime, id, dir: join(root, "pods", pod.uid, "containers", id) };
}


/** A file's output: its CRI records' content (a rotated file may be compressed). */
function outputOf(dir: string, name: string): string {
  const bytes = readFileSync(join(dir, name));
  return decodeCriLog(name.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString();
}

/** Everything the files still hold, oldest first: rotated files by name, then the current one. */
function keptText(dir: string): string {
  const names = logFiles(dir);
  return [...names.filter((name) => name !== CRI_LOG_NAME), CRI_LOG_NAME].map((name) => outputOf(dir, name)).join("");
}

/** Waits out the gzip the monitor may still be running on a rotated file (done when its plain twin is gone). */
async function compressed(dir: string, withinMs = 3_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!compressionDone(dir) && Date.now() < deadline) await Bun.sleep(10);
}

/**
 * One CRI record a file (50-byte files; each record of a 9-letter line is exactly 50 bytes), 3
 * files at most: five lines make four rotations, of which the two oldest are removed, the older kept
 * one is compressed and the newest stays plain. The lines come 0.1 s apart so that each gzip has
 * finished before its file is rotated away.
 */
test("rotation keeps max-files files: the current one, the newest rotated plain, older ones compressed", async () => {
  const root = tempRoot();
  const { runtime, id, dir } = await start(root, { maxBytes: 50, maxFiles: 3 }, ["sh", "-c", "for line in aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd; do echo $line; sleep 0.1; done; echo eeee"]);
  await waitForStatus(runtime, id, (status) => status.state === "exited");
  await compressed(dir);

  const names = logFiles(dir);
  expect(names).toHaveLength(3);
  const [current, older, newest] = names as [string, string, string];
  expect(current).toBe(CRI_LOG_NAME);
  expect(older).toMatch(/^container\.log\.\d{8}-\d{6}\.\d{9}\.gz$/);
  expect(newest).toMatch(/^container\.log\.\d{8}-\d{6}\.\d{9}$/);
  expect(outputOf(dir, older)).toBe("ccccccccc\n");
  expect(outputOf(dir, newest)).toBe("ddddddddd\n");
  expect(outputOf(dir, current)).toBe("eeee\n");
  expect(await runtime.readLogs(id, { tail: 5 })).toBe("eeee\n");
});

test("with max-files 2 nothing is compressed: one rotated file beside the current one", async () => {
  const root = tempRoot();
  // Records of 45 bytes in 50-byte files: one a file; the last line, without its newline, is a P record.
  const { runtime, id, dir } = await start(root, { maxBytes: 50, maxFiles: 2 }, ["printf", "1234\\n5678\\n90ab"]);
  await waitForStatus(runtime, id, (status) => status.state === "exited");
  const names = logFiles(dir);
  expect(names).toHaveLength(2);
  expect(names.some((name) => name.endsWith(".gz"))).toBe(false);
  expect(outputOf(dir, names[1] as string)).toBe("5678\n");
  expect(outputOf(dir, CRI_LOG_NAME)).toBe("90ab");
});

test("a flood stays under max-size x max-files on disk, and no line is lost or repeated at the rotations", async () => {
  const root = tempRoot();
  const policy = { maxBytes: 64 * 1024, maxFiles: 3 };
  const lines = 300_000;
  // seq writes as fast as the pipe takes it: some 14 MB of records, some 200 rotations.
  const { runtime, id, dir } = await start(root, policy, ["seq", "1", String(lines)]);
  let largest = 0;
  for (;;) {
    const status = await runtime.containerStatus(id);
    largest = Math.max(largest, logBytesOnDisk(dir));
    if (status.state === "exited") break;
    await new Promise((r) => setTimeout(r, 5));
  }
  // While a gzip runs, its .gz grows beside the file it compresses (the kubelet's compression too
  // writes the new file before removing the old): at most one file more, for that moment.
  expect(largest).toBeLessThanOrEqual(policy.maxBytes * (policy.maxFiles + 1));
  // Once the last gzip is done (it may outlive the container, and a .gz is written in place while
  // its plain twin stays), the bound itself, and files that can be read whole.
  await compressed(dir, 20_000);
  expect(compressionDone(dir)).toBe(true);
  expect(logBytesOnDisk(dir)).toBeLessThanOrEqual(policy.maxBytes * policy.maxFiles);

  const kept = keptText(dir).split("\n");
  expect(kept.pop()).toBe("");
  // Records are whole in every file: every line kept follows its predecessor.
  const whole = kept.map(Number);
  expect(whole.at(-1)).toBe(lines);
  expect(whole.every((n, i) => n === (i === 0 ? whole[0] : (whole[i - 1] as number) + 1))).toBe(true);
  // At least two whole files of records (none is shorter than 37 bytes).
  expect(kept.length).toBeGreaterThan((2 * policy.maxBytes) / 50);
  expect(await runtime.readLogs(id, { tail: 5 })).toBe(`${[4, 3, 2, 1, 0].map((back) => lines - back).join("\n")}\n`);
}, 30_000);

test("a follower started before a flood gets every line once, across every rotation", async () => {
  const root = tempRoot();
  const go = join(root, "go");
  const bursts = 15;
  const lines = bursts * 10_000;
  // A follower that falls more than max-files behind misses what was removed (the kubelet's does
  // too), and the monitor writes far faster than any reader decodes: the flood comes in bursts of
  // about one file (10,000 records), 0.15 s apart, some fifteen rotations in all.
  const flood = `i=0; while [ $i -lt ${bursts} ]; do seq $((i * 10000 + 1)) $((i * 10000 + 10000)); i=$((i + 1)); sleep 0.15; done`;
  const { runtime, id, dir } = await start(root, { maxBytes: 512 * 1024, maxFiles: 5 }, ["sh", "-c", `while [ ! -e ${go} ]; do sleep 0.01; done; ${flood}`]);
  const attempt: AttemptRow = { podUid: "u", container: "main", attempt: 0, runtimeId: id, startedAt: 0, finishedAt: null, exitCode: null, reason: null, signal: null, logPath: join(dir, CRI_LOG_NAME) };
  let exited = false;
  const store = { attempts: () => [exited ? { ...attempt, finishedAt: 1, exitCode: 0 } : attempt] } as unknown as StoreReader;
  const chunks: Buffer[] = [];
  let opened!: () => void;
  const isOpen = new Promise<void>((resolve) => (opened = resolve));
  const following = writeAttemptLogs(attempt, { follow: true }, { store, clock: realClock, signal: new AbortController().signal, opened, intervalMs: 50 }, (bytes) => void chunks.push(Buffer.from(bytes)));
  await isOpen;
  writeFileSync(go, "");
  await waitForStatus(runtime, id, (status) => status.state === "exited", 30_000);
  exited = true;
  await following;
  const followed = Buffer.concat(chunks).toString();
  const expected = `${Array.from({ length: lines }, (_, i) => i + 1).join("\n")}\n`;
  expect(followed.length).toBe(expected.length);
  expect(followed === expected).toBe(true);
}, 60_000);

test("a process that left the container's group and holds its stdout does not keep the exit from being recorded", async () => {
  const root = tempRoot();
  const marker = `${process.pid}${Date.now() % 100000}`;
  // The escaped sleep keeps the log's pipe open: the writer waits for it only a moment.
  const { runtime, id, dir } = await start(root, { maxBytes: 1024, maxFiles: 2 }, ["sh", "-c", `setsid sleep 60.${marker} & echo bye; exit 3`]);
  try {
    const status = await waitForStatus(runtime, id, (s) => s.state === "exited", 15_000);
    expect(status.exitCode).toBe(3);
    expect(outputOf(dir, CRI_LOG_NAME)).toBe("bye\n");
  } finally {
    for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`60.${marker}`)) process.kill(Number(pid), "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
  }
});

