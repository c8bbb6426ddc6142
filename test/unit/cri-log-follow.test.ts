/**
 * Following a CRI log file (the compiled monitor's container.log) on a fake clock that is never
 * stepped: appended records reach the follower through the file's watch, a record written in two
 * pieces is served once whole, and the follower moves through a rotation (container.log.<time>)
 * without losing or repeating a record.
 */
import { afterEach, expect, test } from "bun:test";
import { appendFileSync, linkSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { waitFor } from "../e2e/helpers.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const dirs: { [Symbol.dispose](): void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir[Symbol.dispose]()));

const rec = (second: number, stream: "stdout" | "stderr", tag: "F" | "P", content: string) => `2026-12-02T14:05:${String(second).padStart(2, "0")}.000000000Z ${stream} ${tag} ${content}\n`;

/** A follow of a running attempt whose container.log starts as `first`, its end told through a commit feed. */
function follow(first: string, timestamps = false) {
  const dir = tempDir("minikubelet-crifollow-");
  dirs.push(dir);
  const logPath = join(dir.path, "container.log");
  writeFileSync(logPath, first);
  const attempt: AttemptRow = { podUid: "u1", container: "web", attempt: 1, runtimeId: "r1", startedAt: 0, finishedAt: null, exitCode: null, reason: null, signal: null, logPath };
  let current = attempt;
  const store = { attempts: () => [current] } as unknown as StoreReader;
  const listeners = new Set<(revision: number) => void>();
  const commits = { subscribe: (listener: (revision: number) => void) => (listeners.add(listener), () => void listeners.delete(listener)) };
  let out = "";
  const following = writeAttemptLogs(attempt, { follow: true, timestamps }, { store, clock: new FakeClock(), signal: new AbortController().signal, commits }, (bytes) => void (out += Buffer.from(bytes).toString()));
  const end = async () => {
    current = { ...attempt, finishedAt: 1, exitCode: 0 };
    listeners.forEach((listener) => listener(2));
    await following;
  };
  return { logPath, output: () => out, end };
}

/** The monitor's rotation: the full file keeps a rotated name, an empty one takes the log's in one rename. */
function rotate(logPath: string, stamp: string): void {
  linkSync(logPath, `${logPath}.${stamp}`);
  writeFileSync(`${logPath}.new`, "");
  renameSync(`${logPath}.new`, logPath);
}

test("appended records reach the follower with their own timestamps, a record cut in two is served once its newline is written", async () => {
  const { logPath, output, end } = follow(rec(1, "stdout", "F", "one"), true);
  await waitFor("the first record", () => output() === "2026-12-02T14:05:01.000000000Z one\n", 5000, output);
  const second = rec(2, "stderr", "F", "two");
  appendFileSync(logPath, second.slice(0, 20));
  // Time for the watch to wake the follower on the half: it serves nothing of it.
  await Bun.sleep(100);
  expect(output()).toBe("2026-12-02T14:05:01.000000000Z one\n");
  appendFileSync(logPath, second.slice(20));
  const want = "2026-12-02T14:05:01.000000000Z one\n2026-12-02T14:05:02.000000000Z two\n";
  await waitFor("the appended record, whole", () => output() === want, 5000, output);
  await end();
  expect(output()).toBe(want);
});

test("a follower reads the rotated container.log to its end, then the new one from its start", async () => {
  const { logPath, output, end } = follow(rec(1, "stdout", "F", "one"));
  await waitFor("the first record", () => output() === "one\n", 5000, output);
  appendFileSync(logPath, rec(2, "stdout", "P", "tw"));
  appendFileSync(logPath, rec(2, "stdout", "F", "o"));
  rotate(logPath, "20261202-140503.000000001");
  appendFileSync(logPath, rec(3, "stderr", "F", "three"));
  await waitFor("the records on both sides of the rotation", () => output() === "one\ntwo\nthree\n", 5000, output);
  appendFileSync(logPath, rec(4, "stdout", "F", "four"));
  await waitFor("a record written to the new file later", () => output() === "one\ntwo\nthree\nfour\n", 5000, output);
  await end();
  expect(output()).toBe("one\ntwo\nthree\nfour\n");
});
