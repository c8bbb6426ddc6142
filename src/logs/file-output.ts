/**
 * What a container's log file serves, by its format: a raw log (the shell monitor's `log`) as its
 * bytes, with times only from the file's last write; a CRI log (the compiled monitor's
 * `container.log`) record by record, each with its own time, as the kubelet's ReadLogs serves it.
 */
import { CriRecordDecoder, isCriLogPath, recordAtOrAfter, type CriRecord, type CriStream } from "../runtime/container-log-file.ts";
import { rfc3339NanoFixed, TimestampPrefixer } from "./timestamps.ts";

/** Takes the next bytes; a promise holds the reader back until the consumer has room. */
export type LogWriter = (bytes: Uint8Array) => void | Promise<void>;

export interface FileOutputQuery {
  sinceMs?: number;
  timestamps?: boolean;
  /** CRI only: this stream's records alone (the caller refuses it for a raw log). */
  stream?: CriStream;
}

export interface FileOutput {
  /** Nothing the file held when opened is served (a raw log last written before `sinceMs`). */
  readonly skipsWritten: boolean;
  /** Takes bytes the file held when it was opened. */
  readonly written: LogWriter;
  /** Takes bytes a follower read at `now`. */
  followed(now: number): LogWriter;
  /** The file's end: serves what a last line without its newline holds. */
  end(): Promise<void>;
}

/** The output of the log at `path`, last written at `writtenAt` (ms), by the format its name says. */
export function fileOutput(path: string, writtenAt: number, query: FileOutputQuery, write: LogWriter): FileOutput {
  return isCriLogPath(path) ? new CriFileOutput(query, write) : new RawFileOutput(writtenAt, query, write);
}

/**
 * The raw log has no per-line times: output already written is stamped (and filtered by
 * `sinceMs`) with the file's last write, the newest any of it can be; followed output with the
 * time it was read.
 */
class RawFileOutput implements FileOutput {
  readonly skipsWritten: boolean;
  readonly written: LogWriter;
  private readonly stamps: TimestampPrefixer | undefined;

  constructor(
    writtenAt: number,
    query: FileOutputQuery,
    private readonly write: LogWriter,
  ) {
    this.skipsWritten = query.sinceMs !== undefined && writtenAt < query.sinceMs;
    this.stamps = query.timestamps ? new TimestampPrefixer() : undefined;
    this.written = this.followed(writtenAt);
  }

  followed(now: number): LogWriter {
    return (bytes) => this.write(this.stamps ? this.stamps.prefix(bytes, now) : bytes);
  }

  async end(): Promise<void> {}
}

/**
 * CRI records, in file order whatever their stream (or those of the one stream asked for; the
 * other's bytes count for nothing, as in the kubelet's logWriter): each record's content (a full line's with its
 * newline), kept when its own time is at or after `sinceMs`, stamped with that time. A P record's
 * stamp and its F record's both show, the second mid-line, as the kubelet writes them. A record
 * split across two reads is served once its newline is read; lines that are no record are skipped.
 */
class CriFileOutput implements FileOutput {
  readonly skipsWritten = false;
  readonly written: LogWriter = (bytes) => this.serve(this.decoder.push(bytes));
  private readonly decoder = new CriRecordDecoder();

  constructor(
    private readonly query: FileOutputQuery,
    private readonly write: LogWriter,
  ) {}

  followed(): LogWriter {
    return this.written;
  }

  async end(): Promise<void> {
    const last = this.decoder.end();
    if (last) await this.serve([last]);
  }

  private serve(records: CriRecord[]): void | Promise<void> {
    const parts: Uint8Array[] = [];
    for (const record of records) {
      if (this.query.stream !== undefined && record.stream !== this.query.stream) continue;
      if (this.query.sinceMs !== undefined && !recordAtOrAfter(record, this.query.sinceMs)) continue;
      if (this.query.timestamps) parts.push(Buffer.from(`${rfc3339NanoFixed(record.ms, record.nanos)} `));
      parts.push(record.content);
      if (!record.partial) parts.push(NEWLINE);
    }
    // One write a read: the consumer's back-pressure applies per chunk, as with a raw log.
    if (parts.length > 0) return this.write(Buffer.concat(parts));
  }
}

const NEWLINE = Buffer.of(0x0a);
