/**
 * The process runtime's container log file: which file a container directory holds its output in,
 * and how that file is written. The compiled monitor writes `container.log` in the kubelet's CRI
 * format, one record a line: `<RFC 3339 time> <stdout|stderr> <F|P> <content>\n`, F when the
 * content was a whole line (its newline dropped), P when it continues in the stream's next record.
 * The shell monitor of earlier versions wrote the raw bytes to `log`, which is read as it always was.
 */
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";

/** The compiled monitor's log, in CRI records; rotated files are `container.log.<time>`. */
export const CRI_LOG_NAME = "container.log";
/** The shell monitor's log, the container's bytes as written; rotated files are `log.<time>`. */
export const LEGACY_LOG_NAME = "log";

/** The log of the container in `dir`: a legacy `log` when the container has one, else the CRI file. */
export function containerLogPath(dir: string): string {
  const legacy = join(dir, LEGACY_LOG_NAME);
  return existsSync(legacy) ? legacy : join(dir, CRI_LOG_NAME);
}

/**
 * Whether the log at `path` (or one of its rotated files) holds CRI records rather than raw bytes:
 * only the compiled monitor's name does. Every other file is read raw, as every log was before it
 * (the shell monitor's `log`, and the files other runtimes and tests record as an attempt's log).
 */
export function isCriLogPath(path: string): boolean {
  const name = basename(path);
  return name === CRI_LOG_NAME || name.startsWith(`${CRI_LOG_NAME}.`);
}

/**
 * The bytes the container in `dir` has in log files: its log and the rotated ones (`log.<time>`,
 * `container.log.<time>`, compressed or not), in either format. 0 when the directory is gone.
 */
export async function containerLogFilesSize(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0; // The directory went with its container.
  }
  const sizes = await Promise.all(
    names
      .filter((name) => [LEGACY_LOG_NAME, CRI_LOG_NAME].some((log) => name === log || name.startsWith(`${log}.`)))
      // Rotated away between the listing and the stat: it takes nothing.
      .map((name) => stat(join(dir, name)).then((info) => info.size, () => 0)),
  );
  return sizes.reduce((total, size) => total + size, 0);
}

export type CriStream = "stdout" | "stderr";

export interface CriRecord {
  /** The record's time, whole ms since the epoch (UTC) ... */
  ms: number;
  /** ... and the nanoseconds past that ms (0 to 999999), which a Date cannot hold. */
  nanos: number;
  stream: CriStream;
  /** P: the content continues in the stream's next record; F: it ended a line, whose newline was dropped. */
  partial: boolean;
  content: Uint8Array;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;
// The kubelet's timeFormatIn (RFC3339NanoLenient): fraction optional and of any length up to 9, Z or an offset.
const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * One record from its line (without the newline that ends it; a trailing one is dropped as the
 * kubelet drops a P record's). Undefined when the line is not a CRI record: the kubelet skips such
 * a line, and so do its readers here. Any tag but P reads as a full line, and a tag may carry more
 * after a `:` (the kubelet's forward compatibility).
 */
export function parseCriRecord(line: Uint8Array): CriRecord | undefined {
  if (line.at(-1) === NEWLINE) line = line.subarray(0, -1);
  return parseMonitorRecord(line) ?? parseAnyRecord(line);
}

// What the monitor writes, byte by byte: `YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ stdout F ` (40 bytes).
const MONITOR_HEAD = 40;
const SECOND_BYTES = 19;
/** The time's 30 bytes as the monitor writes them: `9` stands for any digit. */
const TIME_SHAPE = Buffer.from("9999-99-99T99:99:99.999999999Z");
const DIGIT = 0x39;
const STDOUT = Buffer.from("stdout");
const STDERR = Buffer.from("stderr");
const TAG_FULL = 0x46;
const TAG_PARTIAL = 0x50;
/** The last `YYYY-MM-DDTHH:MM:SS` seen and its epoch ms: a log's records share their second by the thousand. */
const cachedSecond = new Uint8Array(SECOND_BYTES);
let cachedSecondMs = Number.NaN;

/**
 * The monitor's own fixed-width records, read without a regex or a string per field: a `kubectl
 * logs` of a large log decodes millions of them. Anything else (another writer's layout, an
 * offset, fewer fraction digits) is left to parseAnyRecord.
 */
function parseMonitorRecord(line: Uint8Array): CriRecord | undefined {
  if (line.length < MONITOR_HEAD) return undefined;
  for (let at = 0; at < TIME_SHAPE.length; at++) {
    const byte = line[at] as number;
    const shape = TIME_SHAPE[at];
    if (shape === DIGIT ? byte < 0x30 || byte > 0x39 : byte !== shape) return undefined;
  }
  if (line[30] !== SPACE || line[37] !== SPACE || line[39] !== SPACE) return undefined;
  const stream = sameBytes(line, 31, STDOUT) ? "stdout" : sameBytes(line, 31, STDERR) ? "stderr" : undefined;
  const tag = line[38];
  if (!stream || (tag !== TAG_FULL && tag !== TAG_PARTIAL)) return undefined;
  if (!sameBytes(line, 0, cachedSecond)) {
    const time = parseTime(`${String.fromCharCode(...line.subarray(0, SECOND_BYTES))}Z`);
    if (!time) return undefined;
    cachedSecond.set(line.subarray(0, SECOND_BYTES));
    cachedSecondMs = time.ms;
  }
  let fraction = 0;
  for (let at = 20; at < 29; at++) fraction = fraction * 10 + ((line[at] as number) - 0x30);
  return { ms: cachedSecondMs + Math.floor(fraction / 1e6), nanos: fraction % 1e6, stream, partial: tag === TAG_PARTIAL, content: line.subarray(MONITOR_HEAD) };
}

function sameBytes(line: Uint8Array, at: number, expected: Uint8Array): boolean {
  for (let i = 0; i < expected.length; i++) if (line[at + i] !== expected[i]) return false;
  return true;
}

/** Any record the kubelet's parseCRILog takes. */
function parseAnyRecord(line: Uint8Array): CriRecord | undefined {
  const timeEnd = line.indexOf(SPACE);
  if (timeEnd < 0) return undefined;
  const time = parseTime(Buffer.from(line.buffer, line.byteOffset, timeEnd).toString("latin1"));
  if (!time) return undefined;
  const streamEnd = line.indexOf(SPACE, timeEnd + 1);
  if (streamEnd < 0) return undefined;
  const stream = Buffer.from(line.buffer, line.byteOffset + timeEnd + 1, streamEnd - timeEnd - 1).toString("latin1");
  if (stream !== "stdout" && stream !== "stderr") return undefined;
  const tagEnd = line.indexOf(SPACE, streamEnd + 1);
  if (tagEnd < 0) return undefined;
  const tag = Buffer.from(line.buffer, line.byteOffset + streamEnd + 1, tagEnd - streamEnd - 1).toString("latin1");
  return { ...time, stream, partial: tag.split(":")[0] === "P", content: line.subarray(tagEnd + 1) };
}

function parseTime(text: string): { ms: number; nanos: number } | undefined {
  const match = TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetMinutes = match[8] ? (match[8] === "-" ? -1 : 1) * (Number(match[9]) * 60 + Number(match[10])) : 0;
  if (match[8] && (Number(match[9]) > 23 || Number(match[10]) > 59)) return undefined;
  const fraction = Number((match[7] ?? "").padEnd(9, "0"));
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * 60_000 + Math.floor(fraction / 1e6);
  return { ms, nanos: fraction % 1e6 };
}

/** The record's time is at or after `sinceMs` (the kubelet's since: a record before it is skipped). */
export function recordAtOrAfter(record: Pick<CriRecord, "ms" | "nanos">, sinceMs: number): boolean {
  if (record.ms !== Math.floor(sinceMs)) return record.ms > sinceMs;
  return record.nanos >= (sinceMs - record.ms) * 1e6;
}

/**
 * Splits a CRI log arriving in chunks of any size into records: a line split across two chunks is
 * carried until its newline comes. Lines that are no record are skipped.
 */
export class CriRecordDecoder {
  private carried: Uint8Array[] = [];

  /** The records completed by `bytes`, in file order. */
  push(bytes: Uint8Array): CriRecord[] {
    const records: CriRecord[] = [];
    let from = 0;
    for (let newline = bytes.indexOf(NEWLINE); newline >= 0; newline = bytes.indexOf(NEWLINE, from)) {
      let line = bytes.subarray(from, newline);
      if (this.carried.length > 0) {
        line = Buffer.concat([...this.carried, line]);
        this.carried = [];
      }
      const record = parseCriRecord(line);
      if (record) records.push(record);
      from = newline + 1;
    }
    // Copied: the reader may reuse the chunk's buffer.
    if (from < bytes.length) this.carried.push(Buffer.from(bytes.subarray(from)));
    return records;
  }

  /**
   * The record of a last line without its newline, as the kubelet reads the end of a file it does
   * not follow: marked partial, since the kubelet serves such a line's content as it is, with no
   * newline. Undefined when there is none (or it is no record).
   */
  end(): CriRecord | undefined {
    if (this.carried.length === 0) return undefined;
    const record = parseCriRecord(Buffer.concat(this.carried));
    this.carried = [];
    return record && { ...record, partial: true };
  }
}

/**
 * What the records of a whole CRI log say, both streams in file order: each record's content, a
 * full line's with its newline. `tailLines` keeps the last that many lines of the file (records,
 * as the kubelet's tail counts them).
 */
export function decodeCriLog(bytes: Uint8Array, tailLines?: number): Buffer {
  if (tailLines !== undefined) bytes = bytes.subarray(lastLinesStart(bytes, tailLines));
  const decoder = new CriRecordDecoder();
  const records = decoder.push(bytes);
  const last = decoder.end();
  if (last) records.push(last);
  return Buffer.concat(records.flatMap((record) => (record.partial ? [record.content] : [record.content, Buffer.of(NEWLINE)])));
}

function lastLinesStart(bytes: Uint8Array, lines: number): number {
  if (lines <= 0) return bytes.length;
  let found = 0;
  for (let i = bytes.length - 2; i >= 0; i--) {
    if (bytes[i] === NEWLINE && ++found === lines) return i + 1;
  }
  return 0;
}
