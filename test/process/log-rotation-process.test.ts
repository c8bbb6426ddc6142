/**
 * Container log rotation on the process runtime: the monitor's writer rotates `log` as it fills,
 * keeps at most --container-log-max-files files (older rotated ones compressed), and loses or
 * repeats no line at the rotations, even under a container writing as fast as it can.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { ContainerLogPolicy } from "../../src/runtime/log-rotation-policy.ts";
import { resolveMonitorTools } from "../../src/runtime/process-monitor.ts";
import { ProcessRuntime } from "../../src/runtime/process.ts";
import { writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import { realClock } from "../../src/clock.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { logBytesOnDisk, logFiles } from "../log-files.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const roots: string[] = [];
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), "minikubelet-logrotate-"));
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

async function start(root: string, logPolicy: ContainerLogPolicy, command: string[], date?: string) {
  const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root), logPolicy, monitorTools: date ? { date } : undefined });
  const container = contractContainer("main", command);
  const pod = contractPod("flood", [container]);
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  open.push({ runtime, id });
  return { runtime, id, dir: join(root, "pods", pod.uid, "containers", id) };
}


/** Everything the files still hold, oldest first: rotated files by name, then the current one. */
function keptText(dir: string): string {
  const names = logFiles(dir);
  const ordered = [...names.filter((name) => name !== "log"), "log"];
  return ordered
    .map((name) => {
      const bytes = readFileSync(join(dir, name));
      return (name.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString();
    })
    .join("");
}

/**
 * The rotation policy with a fake clock: `date -u` (the rotated files' names) counts up from a
 * file, so the names are known. 10-byte files, 3 at most: 45 bytes make four rotations, of which
 * the two oldest are removed, the older kept one is compressed and the newest stays plain.
 */
test("rotation keeps max-files files: the current one, the newest rotated plain, older ones compressed", async () => {
  const root = tempRoot();
  const fakeDate = join(root, "fake-date");
  const counter = join(root, "clock");
  writeFileSync(counter, "0");
  writeFileSync(
    fakeDate,
    `#!/bin/sh
if [ "$1" = -u ]; then n=$(($(cat ${counter}) + 1)); echo $n >${counter}; echo "20260101-00000$n.000000000"; exit 0; fi
exec ${resolveMonitorTools().date} "$@"
`,
  );
  chmodSync(fakeDate, 0o755);
  const { runtime, id, dir } = await start(root, { maxBytes: 10, maxFiles: 3 }, ["printf", "aaaaaaaaa\\nbbbbbbbbb\\nccccccccc\\nddddddddd\\neeee\\n"], fakeDate);
  await waitForStatus(runtime, id, (status) => status.state === "exited");

  expect(logFiles(dir)).toEqual(["log", "log.20260101-000003.000000000.gz", "log.20260101-000004.000000000"]);
  expect(gunzipSync(readFileSync(join(dir, "log.20260101-000003.000000000.gz"))).toString()).toBe("ccccccccc\n");
  expect(readFileSync(join(dir, "log.20260101-000004.000000000"), "utf8")).toBe("ddddddddd\n");
  expect(readFileSync(join(dir, "log"), "utf8")).toBe("eeee\n");
  expect(await runtime.readLogs(id, { tail: 5 })).toBe("eeee\n");
});

test("with max-files 2 nothing is compressed: one rotated file beside the current one", async () => {
  const root = tempRoot();
  const { runtime, id, dir } = await start(root, { maxBytes: 4, maxFiles: 2 }, ["printf", "1234567890ab"]);
  await waitForStatus(runtime, id, (status) => status.state === "exited");
  const names = logFiles(dir);
  expect(names).toHaveLength(2);
  expect(names.some((name) => name.endsWith(".gz"))).toBe(false);
  expect(readFileSync(join(dir, names[1] as string), "utf8")).toBe("90ab");
  // The last 4 bytes filled the file, so it rotated; the current file is empty.
  expect(readFileSync(join(dir, "log"), "utf8")).toBe("");
});

test("a flood stays under max-size x max-files on disk, and no line is lost or repeated at the rotations", async () => {
  const root = tempRoot();
  const policy = { maxBytes: 64 * 1024, maxFiles: 3 };
  const lines = 1_500_000;
  // seq writes as fast as the pipe takes it: about 11 MB, some 170 rotations.
  const { runtime, id, dir } = await start(root, policy, ["seq", "1", String(lines)]);
  let largest = 0;
  for (;;) {
    const status = await runtime.containerStatus(id);
    largest = Math.max(largest, logBytesOnDisk(dir));
    if (status.state === "exited") break;
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(largest).toBeLessThanOrEqual(policy.maxBytes * policy.maxFiles);
  expect(logBytesOnDisk(dir)).toBeLessThanOrEqual(policy.maxBytes * policy.maxFiles);

  const kept = keptText(dir).split("\n");
  expect(kept.pop()).toBe("");
  // The oldest kept file may start inside a line; every whole line after it follows its predecessor.
  const whole = kept.slice(1).map(Number);
  expect(whole.at(-1)).toBe(lines);
  expect(whole.every((n, i) => n === (i === 0 ? whole[0] : (whole[i - 1] as number) + 1))).toBe(true);
  expect(kept.length).toBeGreaterThan(10_000);
  expect(await runtime.readLogs(id, { tail: 5 })).toBe(`${[4, 3, 2, 1, 0].map((back) => lines - back).join("\n")}\n`);
});

test("a follower started before a flood gets every line once, across every rotation", async () => {
  const root = tempRoot();
  const go = join(root, "go");
  const lines = 1_500_000;
  // A follower that falls more than max-files behind misses what was removed (the kubelet's does
  // too): 512Ki files leave it room, while some twenty rotations happen under it.
  const { runtime, id, dir } = await start(root, { maxBytes: 512 * 1024, maxFiles: 3 }, ["sh", "-c", `while [ ! -e ${go} ]; do sleep 0.01; done; exec seq 1 ${lines}`]);
  const attempt: AttemptRow = { podUid: "u", container: "main", attempt: 0, runtimeId: id, startedAt: 0, finishedAt: null, exitCode: null, reason: null, signal: null, logPath: join(dir, "log") };
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
  expect(followed.length).toBeGreaterThan(20 * 512 * 1024);
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
    expect(readFileSync(join(dir, "log"), "utf8")).toBe("bye\n");
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

