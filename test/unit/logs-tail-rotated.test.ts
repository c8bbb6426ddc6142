/**
 * `logs --tail N` (and the API's tailLines) after a rotation: when the log holds fewer lines than
 * asked since it was rotated, the rest come from the newest rotated file, which the log continues
 * (a rotation by size may cut a line in two). Compressed and older files are not read, as the
 * kubelet reads only the current file.
 */
import { afterEach, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import { LOG_CHUNK_BYTES } from "../../src/logs/log-file.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const dirs: { [Symbol.dispose](): void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir[Symbol.dispose]()));

/** An ended attempt whose log directory holds `files` (name -> content). */
async function tail(files: Record<string, string>, tailLines: number | undefined): Promise<string> {
  const dir = tempDir("minikubelet-tail-");
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir.path, name), content);
  const logPath = join(dir.path, "log");
  const attempt: AttemptRow = { podUid: "u1", container: "web", attempt: 1, runtimeId: "r1", startedAt: 0, finishedAt: 1, exitCode: 0, reason: null, signal: null, logPath };
  const store = { attempts: () => [attempt] } as unknown as StoreReader;
  let out = "";
  await writeAttemptLogs(attempt, { tailLines }, { store, clock: new FakeClock(), signal: new AbortController().signal }, (bytes) => void (out += Buffer.from(bytes).toString()));
  return out;
}

const rotated = {
  "log.20260101-000001.000000000.gz": "not read",
  "log.20260101-000002.000000000": "1\n2\n3\n4",
};

test("a tail the log alone cannot fill starts in the newest rotated file, a line cut by the rotation made whole", async () => {
  expect(await tail({ ...rotated, log: "5\n6\n7\n" }, 2)).toBe("6\n7\n");
  expect(await tail({ ...rotated, log: "5\n6\n7\n" }, 3)).toBe("45\n6\n7\n");
  expect(await tail({ ...rotated, log: "5\n6\n7\n" }, 4)).toBe("3\n45\n6\n7\n");
  expect(await tail({ ...rotated, log: "5\n6\n7\n" }, 100)).toBe("1\n2\n3\n45\n6\n7\n");
});

test("just after a rotation the log is empty, and the tail is all from the rotated file", async () => {
  expect(await tail({ "log.20260101-000002.000000000": "1\n2\n3\n", log: "" }, 2)).toBe("2\n3\n");
  expect(await tail({ "log.20260101-000002.000000000": "1\n2\n3\n", log: "" }, 0)).toBe("");
});

test("without a tail the log is read alone, as the kubelet reads the current file", async () => {
  expect(await tail({ ...rotated, log: "5\n6\n7\n" }, undefined)).toBe("5\n6\n7\n");
});

test("a tail is found across the reader's blocks: newlines on a block's edge, lines longer than a block, in the log and the rotated file", async () => {
  const long = "x".repeat(3 * LOG_CHUNK_BYTES + 17);
  // The text's last byte is read first, so its block ends at the file's end: put newlines just inside and outside the edge.
  const edge = `${"e".repeat(LOG_CHUNK_BYTES - 2)}\n`;
  for (const lines of [1, 2, 3]) {
    const log = `first\n${"p".repeat(10)}\n${edge}${edge}`;
    expect(await tail({ log }, lines)).toBe([`${"p".repeat(10)}\n`, edge, edge].slice(3 - lines).join(""));
  }
  expect(await tail({ log: `first\n${long}\nlast\n` }, 2)).toBe(`${long}\nlast\n`);
  expect(await tail({ log: `first\n${long}` }, 1)).toBe(long);
  expect(await tail({ log: `first\n${long}` }, 2)).toBe(`first\n${long}`);
  expect(await tail({ "log.20260101-000002.000000000": `old\n${long}\nhalf`, log: "-line\nnew\n" }, 3)).toBe(`${long}\nhalf-line\nnew\n`);
});
