/**
 * Following a process attempt's log file (`logs -f`, the API's follow=true) on a fake clock that is
 * never stepped unless a test says so: a line appended to the file reaches the follower through the
 * file's watch, not a poll, and the attempt's end through the commit feed; without a feed, the end
 * is noticed at the backstop check.
 */
import { afterEach, expect, test } from "bun:test";
import { appendFileSync, linkSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FOLLOW_BACKSTOP_MS, writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { waitFor } from "../e2e/helpers.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const dirs: { [Symbol.dispose](): void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir[Symbol.dispose]()));

/** A running attempt logging to a fresh file, and a store whose answer about it a test can change. */
function runningAttempt(firstLine: string) {
  const dir = tempDir("minikubelet-follow-");
  dirs.push(dir);
  const logPath = join(dir.path, "log");
  writeFileSync(logPath, firstLine);
  const attempt: AttemptRow = { podUid: "u1", container: "web", attempt: 1, runtimeId: "r1", startedAt: 0, finishedAt: null, exitCode: null, reason: null, signal: null, logPath };
  let current = attempt;
  const store = { attempts: () => [current] } as unknown as StoreReader;
  return { attempt, logPath, store, finish: () => (current = { ...attempt, finishedAt: 1, exitCode: 0 }) };
}

/** A commit feed the test publishes on, as the agent's store does after each commit. */
function commitFeed() {
  const listeners = new Set<(revision: number) => void>();
  return {
    subscribe(listener: (revision: number) => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    publish: (revision: number) => listeners.forEach((listener) => listener(revision)),
  };
}

/** A follow of a running attempt that has written `firstLine`, its end told by a commit feed; resolves once that line is out. */
async function followWithCommits(firstLine: string) {
  const { attempt, logPath, store, finish } = runningAttempt(firstLine);
  const commits = commitFeed();
  let out = "";
  const following = writeAttemptLogs(attempt, { follow: true }, { store, clock: new FakeClock(), signal: new AbortController().signal, commits }, (bytes) => void (out += Buffer.from(bytes).toString()));
  const output = () => out;
  await waitFor("the first line", () => out === firstLine, 5000, output);
  return { logPath, finish, commits, following, output };
}

/** The monitor's rotation: the full file keeps a rotated name, an empty one takes `log` in one rename. */
function rotate(logPath: string, stamp: string): void {
  linkSync(logPath, `${logPath}.${stamp}`);
  writeFileSync(`${logPath}.new`, "");
  renameSync(`${logPath}.new`, logPath);
}

test("a line appended to a followed file reaches the follower without the clock moving, and a commit that ends the attempt ends the follow", async () => {
  const { logPath, finish, commits, following, output } = await followWithCommits("one\n");
  appendFileSync(logPath, "two\n");
  await waitFor("the appended line, with the clock standing still", () => output() === "one\ntwo\n", 5000, output);
  finish();
  commits.publish(2);
  await following;
  expect(output()).toBe("one\ntwo\n");
});

test("without a commit feed, the attempt's end is noticed at the backstop check", async () => {
  const { attempt, store, finish } = runningAttempt("one\n");
  const clock = new FakeClock();
  let out = "";
  let done = false;
  const following = writeAttemptLogs(attempt, { follow: true }, { store, clock, signal: new AbortController().signal }, (bytes) => void (out += Buffer.from(bytes).toString())).then(() => (done = true));
  await waitFor("the first line", () => out === "one\n", 5000, () => out);
  await waitFor("the follower waiting on its backstop", () => clock.pendingTimers() === 1, 5000);
  finish();
  clock.step(FOLLOW_BACKSTOP_MS - 1);
  await Bun.sleep(20);
  expect(done).toBe(false);
  clock.step(1);
  await following;
  expect(out).toBe("one\n");
});

test("a follower moves on when the writer rotates the log: the old file is read to its end, then the new one from its start", async () => {
  const { logPath, finish, commits, following, output } = await followWithCommits("one\n");
  appendFileSync(logPath, "two\n");
  rotate(logPath, "20260101-000000.000000001");
  appendFileSync(logPath, "three\n");
  await waitFor("the lines on both sides of the rotation", () => output() === "one\ntwo\nthree\n", 5000, output);
  appendFileSync(logPath, "four\n");
  await waitFor("a line written to the new file later", () => output() === "one\ntwo\nthree\nfour\n", 5000, output);
  finish();
  commits.publish(2);
  await following;
  expect(output()).toBe("one\ntwo\nthree\nfour\n");
});

test("a follower that slept through two rotations reads the newest rotated file before the new log", async () => {
  const { logPath, finish, commits, following, output } = await followWithCommits("one\n");
  // All of it at once, before the follower runs again: the first rotated file is compressed away.
  appendFileSync(logPath, "two\n");
  rotate(logPath, "20260101-000000.000000001");
  appendFileSync(logPath, "three\n");
  rotate(logPath, "20260101-000000.000000002");
  renameSync(`${logPath}.20260101-000000.000000001`, `${logPath}.20260101-000000.000000001.gz`);
  appendFileSync(logPath, "four\n");
  await waitFor("every line, in order", () => output() === "one\ntwo\nthree\nfour\n", 5000, output);
  finish();
  commits.publish(2);
  await following;
  expect(output()).toBe("one\ntwo\nthree\nfour\n");
});
