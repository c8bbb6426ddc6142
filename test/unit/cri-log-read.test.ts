/**
 * `logs` and the API's pods/log on a CRI log file (the compiled monitor's container.log), as the
 * kubelet's ReadLogs serves one: record by record, both streams in file order, since by each
 * record's own time, tail by the file's lines (into the newest rotated file when the log holds too
 * few), timestamps from the records, the byte limit on the output.
 */
import { afterEach, expect, test } from "bun:test";
import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeAttemptLogs, type LogQuery } from "../../src/logs/attempt-logs.ts";
import { LOG_CHUNK_BYTES } from "../../src/logs/log-file.ts";
import type { AttemptRow, StoreReader } from "../../src/store/queries.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const dirs: { [Symbol.dispose](): void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir[Symbol.dispose]()));

/** A record at second `second` of 2026-12-02T14:05 (with `fraction`, nine digits). */
const rec = (second: number, stream: "stdout" | "stderr", tag: "F" | "P", content: string, fraction = "000000000") =>
  `2026-12-02T14:05:${String(second).padStart(2, "0")}.${fraction}Z ${stream} ${tag} ${content}\n`;
const at = (second: number) => Date.UTC(2026, 11, 2, 14, 5, second);

/** An ended attempt whose log directory holds `files` (name -> content), read with `query`. */
async function read(files: Record<string, string | Buffer>, query: LogQuery, modifiedAt?: number): Promise<string> {
  const dir = tempDir("minikubelet-crilog-");
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir.path, name), content);
  const logPath = join(dir.path, "container.log");
  if (modifiedAt !== undefined) utimesSync(logPath, modifiedAt / 1000, modifiedAt / 1000);
  const attempt: AttemptRow = { podUid: "u1", container: "web", attempt: 1, runtimeId: "r1", startedAt: 0, finishedAt: 1, exitCode: 0, reason: null, signal: null, logPath };
  const store = { attempts: () => [attempt] } as unknown as StoreReader;
  const chunks: Buffer[] = [];
  await writeAttemptLogs(attempt, query, { store, clock: new FakeClock(), signal: new AbortController().signal }, (bytes) => void chunks.push(Buffer.from(bytes)));
  return Buffer.concat(chunks).toString();
}

const log = rec(1, "stdout", "F", "one") + rec(2, "stderr", "P", "tw") + "garbage line\n" + rec(3, "stderr", "F", "o") + rec(4, "stdout", "F", "three");

test("records' content in file order whatever their stream, a P record joined to the F that ends it, lines that are no record skipped", async () => {
  expect(await read({ "container.log": log }, {})).toBe("one\ntwo\nthree\n");
});

test("since keeps the records written at or after it, by each record's time and not the file's", async () => {
  expect(await read({ "container.log": log }, { sinceMs: at(2) })).toBe("two\nthree\n");
  expect(await read({ "container.log": log }, { sinceMs: at(3) })).toBe("o\nthree\n");
  expect(await read({ "container.log": log }, { sinceMs: at(4) + 1 })).toBe("");
  // The file's last write before since (a raw log would then serve nothing) does not drop newer records.
  expect(await read({ "container.log": log }, { sinceMs: at(3) }, at(0))).toBe("o\nthree\n");
});

test("timestamps are each record's own, nanoseconds and all; a P record's F shows its stamp mid-line, as the kubelet writes it", async () => {
  const file = rec(1, "stdout", "P", "a", "123456789") + rec(2, "stdout", "F", "b", "5") + rec(3, "stderr", "F", "c", "000000001");
  expect(await read({ "container.log": file }, { timestamps: true })).toBe(
    "2026-12-02T14:05:01.123456789Z a2026-12-02T14:05:02.500000000Z b\n2026-12-02T14:05:03.000000001Z c\n",
  );
});

test("the byte limit counts the output, timestamps included, not the file's bytes", async () => {
  expect(await read({ "container.log": log }, { limitBytes: 6 })).toBe("one\ntw");
  expect(await read({ "container.log": log }, { limitBytes: 33, timestamps: true })).toBe("2026-12-02T14:05:01.000000000Z on");
});

test("a tail counts the file's lines and goes on into the newest rotated file when the log holds too few", async () => {
  const files = {
    "container.log.20260101-000001.000000000.gz": "not read",
    "container.log.20260101-000002.000000000": rec(1, "stdout", "F", "1") + rec(2, "stdout", "F", "2") + rec(3, "stderr", "F", "3"),
    "container.log": rec(4, "stdout", "F", "4") + rec(5, "stdout", "F", "5"),
  };
  expect(await read(files, { tailLines: 1 })).toBe("5\n");
  expect(await read(files, { tailLines: 2 })).toBe("4\n5\n");
  expect(await read(files, { tailLines: 3 })).toBe("3\n4\n5\n");
  expect(await read(files, { tailLines: 4 })).toBe("2\n3\n4\n5\n");
  expect(await read(files, { tailLines: 100 })).toBe("1\n2\n3\n4\n5\n");
  expect(await read({ ...files, "container.log": "" }, { tailLines: 2 })).toBe("2\n3\n");
  // Since applies to the rotated file's records too.
  expect(await read(files, { tailLines: 100, sinceMs: at(3) })).toBe("3\n4\n5\n");
  // Without a tail the log is read alone, as the kubelet reads the current file.
  expect(await read(files, {})).toBe("4\n5\n");
});

test("a record longer than a read chunk, and a P/F line of 100 KiB, come out whole", async () => {
  const big = "x".repeat(100 * 1024);
  const half = big.length / 2;
  const file = rec(1, "stdout", "F", "before") + rec(2, "stdout", "F", big) + rec(3, "stderr", "P", big.slice(0, half)) + rec(3, "stderr", "F", big.slice(half)) + rec(4, "stdout", "F", "after");
  expect(file.length).toBeGreaterThan(3 * LOG_CHUNK_BYTES);
  expect(await read({ "container.log": file }, {})).toBe(`before\n${big}\n${big}\nafter\n`);
  expect(await read({ "container.log": file }, { tailLines: 3 })).toBe(`${big}\nafter\n`);
});

test("content is served as bytes, invalid UTF-8 included", async () => {
  const file = Buffer.concat([Buffer.from("2026-12-02T14:05:01Z stdout F "), Buffer.of(0xff, 0x00), Buffer.from("\n")]);
  const dir = tempDir("minikubelet-crilog-");
  dirs.push(dir);
  const logPath = join(dir.path, "container.log");
  writeFileSync(logPath, file);
  const attempt: AttemptRow = { podUid: "u1", container: "web", attempt: 1, runtimeId: "r1", startedAt: 0, finishedAt: 1, exitCode: 0, reason: null, signal: null, logPath };
  const chunks: Buffer[] = [];
  await writeAttemptLogs(attempt, {}, { store: { attempts: () => [attempt] } as unknown as StoreReader, clock: new FakeClock(), signal: new AbortController().signal }, (bytes) => void chunks.push(Buffer.from(bytes)));
  expect(Buffer.concat(chunks)).toEqual(Buffer.of(0xff, 0x00, 0x0a));
});
