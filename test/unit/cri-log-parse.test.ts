/**
 * The compiled monitor's CRI log format (runtime/container-log-file.ts): one record a line, parsed
 * as the kubelet's parseCRILog parses it, lines that are no record skipped; which file a container
 * directory's log is (a legacy raw `log` wins when it exists); and the runtime's own readLogs (the
 * termination-message fallback) on a CRI file.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Cgroups } from "../../src/runtime/process/cgroups.ts";
import { CriRecordDecoder, containerLogFilesSize, containerLogPath, decodeCriLog, isCriLogPath, parseCriRecord, recordAtOrAfter } from "../../src/runtime/container-log-file.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { tempDir } from "../store-fixtures.ts";

const dirs: { [Symbol.dispose](): void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir[Symbol.dispose]()));

const parse = (line: string) => {
  const record = parseCriRecord(Buffer.from(line));
  return record && { ...record, content: Buffer.from(record.content).toString() };
};

test("a record's time, stream, tag and content; the time in ms since the epoch plus the nanoseconds past it", () => {
  expect(parse("2026-12-02T14:05:01.123456789Z stdout F hello world")).toEqual({ ms: Date.UTC(2026, 11, 2, 14, 5, 1, 123), nanos: 456789, stream: "stdout", partial: false, content: "hello world" });
  expect(parse("2026-12-02T14:05:01.123456789Z stderr P half\n")).toEqual({ ms: Date.UTC(2026, 11, 2, 14, 5, 1, 123), nanos: 456789, stream: "stderr", partial: true, content: "half" });
  // Content is the rest of the line, spaces and all; an empty line is an F record with no content.
  expect(parse("2026-12-02T14:05:01Z stdout F  two  spaces ")?.content).toBe(" two  spaces ");
  expect(parse("2026-12-02T14:05:01Z stdout F ")?.content).toBe("");
  // A tag may carry more after a colon (forward compatible, as the kubelet reads it).
  expect(parse("2026-12-02T14:05:01Z stdout P:x y")?.partial).toBe(true);
});

test("times the kubelet accepts: any fraction up to nine digits or none, Z or an offset", () => {
  const cases: [string, number, number][] = [
    ["2026-12-02T14:05:01Z", Date.UTC(2026, 11, 2, 14, 5, 1), 0],
    ["2026-12-02T14:05:01.5Z", Date.UTC(2026, 11, 2, 14, 5, 1, 500), 0],
    ["2026-12-02T14:05:01.000001Z", Date.UTC(2026, 11, 2, 14, 5, 1), 1000],
    ["2026-12-02T14:05:01.123456780Z", Date.UTC(2026, 11, 2, 14, 5, 1, 123), 456780],
    ["2026-12-02T16:05:01.000000001+02:00", Date.UTC(2026, 11, 2, 14, 5, 1), 1],
    ["2026-12-02T09:35:01-04:30", Date.UTC(2026, 11, 2, 14, 5, 1), 0],
  ];
  for (const [time, ms, nanos] of cases) expect({ time, ...parse(`${time} stdout F x`)! }).toMatchObject({ time, ms, nanos });
});

test("a line that is no record is not parsed", () => {
  const lines = [
    "",
    "plain output",
    "2026-12-02T14:05:01Z",
    "2026-12-02T14:05:01Z stdout",
    "2026-12-02T14:05:01Z stdout F",
    "2026-12-02T14:05:01Z stdin F x",
    "2026-12-02 14:05:01Z stdout F x",
    "2026-12-02T14:05:01 stdout F x",
    "2026-13-02T14:05:01Z stdout F x",
    "2026-02-30T14:05:01Z stdout F x",
    "2026-12-02T24:05:01Z stdout F x",
    "2026-12-02T14:05:01.1234567890Z stdout F x",
    "2026-12-02T14:05:01.Z stdout F x",
  ];
  for (const line of lines) expect({ line, record: parse(line) }).toEqual({ line, record: undefined });
});

test("content is bytes: invalid UTF-8 and NUL pass through unchanged", () => {
  const content = Buffer.of(0xff, 0x00, 0xc3, 0x28);
  const record = parseCriRecord(Buffer.concat([Buffer.from("2026-12-02T14:05:01Z stdout F "), content]));
  expect(Buffer.from(record!.content)).toEqual(content);
});

test("since keeps records at or after it, to the nanosecond", () => {
  const at = { ms: 1000, nanos: 0 };
  expect(recordAtOrAfter(at, 1000)).toBe(true);
  expect(recordAtOrAfter(at, 1001)).toBe(false);
  expect(recordAtOrAfter({ ms: 999, nanos: 999999 }, 1000)).toBe(false);
  expect(recordAtOrAfter({ ms: 1000, nanos: 500000 }, 1000.5)).toBe(true);
  expect(recordAtOrAfter({ ms: 1000, nanos: 499999 }, 1000.5)).toBe(false);
});

test("the decoder carries a line cut between two chunks, at every cut, and skips lines that are no record", () => {
  const text = "2026-12-02T14:05:01Z stdout P ab\njunk\n2026-12-02T14:05:02Z stderr F cd\n";
  for (let cut = 0; cut <= text.length; cut++) {
    const decoder = new CriRecordDecoder();
    const records = [...decoder.push(Buffer.from(text.slice(0, cut))), ...decoder.push(Buffer.from(text.slice(cut)))];
    expect({ cut, records: records.map((r) => `${r.stream}:${r.partial ? "P" : "F"}:${Buffer.from(r.content)}`), end: decoder.end() }).toEqual({ cut, records: ["stdout:P:ab", "stderr:F:cd"], end: undefined });
  }
});

test("a whole file decoded: both streams in file order, P joined to its F, a last line without its newline served without one", () => {
  const file = ["2026-12-02T14:05:01Z stdout P hel", "2026-12-02T14:05:01Z stdout F lo", "not a record", "2026-12-02T14:05:02Z stderr F oops", "2026-12-02T14:05:03Z stdout F cut"].join("\n");
  expect(decodeCriLog(Buffer.from(file)).toString()).toBe("hello\noops\ncut");
  expect(decodeCriLog(Buffer.from(`${file}\n`)).toString()).toBe("hello\noops\ncut\n");
  // The tail counts the file's lines, records or not.
  expect(decodeCriLog(Buffer.from(`${file}\n`), 3).toString()).toBe("oops\ncut\n");
  expect(decodeCriLog(Buffer.from(`${file}\n`), 4).toString()).toBe("lo\noops\ncut\n");
  expect(decodeCriLog(Buffer.from(`${file}\n`), 0).toString()).toBe("");
});

test("a container's log is its legacy raw `log` when there is one, else container.log; only container.log files are CRI", () => {
  const dir = tempDir("minikubelet-crilog-");
  dirs.push(dir);
  expect(containerLogPath(dir.path)).toBe(join(dir.path, "container.log"));
  writeFileSync(join(dir.path, "log"), "");
  expect(containerLogPath(dir.path)).toBe(join(dir.path, "log"));
  expect(isCriLogPath(join(dir.path, "container.log"))).toBe(true);
  expect(isCriLogPath(join(dir.path, "container.log.20260101-000000.000000001"))).toBe(true);
  expect(isCriLogPath(join(dir.path, "log"))).toBe(false);
  expect(isCriLogPath(join(dir.path, "log.20260101-000000.000000001"))).toBe(false);
  expect(isCriLogPath(join(dir.path, "c1.log"))).toBe(false);
});

test("a container's log bytes are its log's and its rotated files', in either format, and nothing else's", async () => {
  const dir = tempDir("minikubelet-crilog-");
  dirs.push(dir);
  const files = { "container.log": 1, "container.log.20260101-000000.000000001": 10, "container.log.20260101-000000.000000000.gz": 100, log: 1000, "log.20260101-000000.000000001": 10000, "config.json": 100000, "logs.txt": 1000000 };
  for (const [name, size] of Object.entries(files)) writeFileSync(join(dir.path, name), "x".repeat(size));
  expect(await containerLogFilesSize(dir.path)).toBe(11111);
  expect(await containerLogFilesSize(join(dir.path, "gone"))).toBe(0);
});

test("the process runtime's readLogs serves a CRI file's content, both streams in order, its tail in records; a raw log as it is", async () => {
  const dir = tempDir("minikubelet-crilog-");
  dirs.push(dir);
  const runtime = new ProcessRuntime({ rootDir: dir.path, cgroups: new Cgroups({ kind: "unavailable", reason: "test" }, "test") });
  try {
    // The id as the runtime makes them: its pod uid's first characters, then name, attempt and a suffix.
    const id = "u1-main-0-c0ffee";
    const containerDir = join(dir.path, "pods", "u1", "containers", id);
    mkdirSync(containerDir, { recursive: true });
    writeFileSync(join(containerDir, "container.log"), "2026-12-02T14:05:01Z stdout F one\n2026-12-02T14:05:02Z stderr P tw\n2026-12-02T14:05:02Z stderr F o\n2026-12-02T14:05:03Z stdout F three\n");
    expect(await runtime.readLogs(id)).toBe("one\ntwo\nthree\n");
    expect(await runtime.readLogs(id, { tail: 2 })).toBe("o\nthree\n");
    writeFileSync(join(containerDir, "log"), "raw 1\nraw 2\n");
    expect(await runtime.readLogs(id, { tail: 1 })).toBe("raw 2\n");
  } finally {
    await runtime.close();
  }
});
