/**
 * Reading a container attempt's log file (the process runtime keeps one per attempt) in bounded
 * pieces: a tail is found by scanning back from the end, never by reading the file whole, and every
 * read is a fixed-size chunk, so a multi-GB log costs what the answer costs.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** One read's size, and the most a single chunk handed to a consumer holds. */
export const LOG_CHUNK_BYTES = 64 * 1024;

export interface LogRange {
  /** Byte offset of the first byte to serve. */
  start: number;
  /** Byte offset just past the last byte to serve (the file's size when the range was taken). */
  end: number;
}

/**
 * An open log file. Reads go through the descriptor, not the name, so a follower keeps reading the
 * very file it started on when the writer rotates it away (the name then holds a new, empty file).
 */
export class OpenLog implements Disposable {
  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly inode: number,
  ) {}

  /**
   * Opens `file` (default: the log itself, `path`) as the log at `path`; throws the system's error
   * (ENOENT when the pod and its files are gone).
   */
  static open(path: string, file = path): OpenLog {
    const fd = openSync(file, "r");
    return new OpenLog(path, fd, fstatSync(fd).ino);
  }

  /**
   * What a follower reads after this file, once rotated: the newest rotated file when that is
   * another one (the writer rotated more than once since this one was read; the older ones are
   * compressed or gone), else the log itself.
   */
  next(): OpenLog {
    const newest = this.rotatedNames().at(-1);
    if (newest !== undefined) {
      try {
        const rotated = OpenLog.open(this.path, join(dirname(this.path), newest));
        if (rotated.inode !== this.inode) return rotated;
        rotated[Symbol.dispose]();
      } catch {
        // Compressed away meanwhile: the log itself is next.
      }
    }
    return OpenLog.open(this.path);
  }

  size(): number {
    return fstatSync(this.fd).size;
  }

  /** When the file was last written, in ms since the epoch. */
  writtenAt(): number {
    return fstatSync(this.fd).mtimeMs;
  }

  /**
   * The bytes holding the last `tailLines` lines (all of it when undefined), from the size now. A
   * last line without its newline counts as a line, as the kubelet counts it.
   */
  tail(tailLines: number | undefined): LogRange & { missing: number } {
    const end = this.size();
    if (tailLines === undefined) return { start: 0, end, missing: 0 };
    const { start, found } = tailStart(this.fd, end, tailLines, true);
    return { start, end, missing: tailLines - found };
  }

  /**
   * The rest of a tail that reached the start of the log: the last `missing` lines of the newest
   * rotated file, which the log continues (its first line may be the end of that file's last one,
   * since the writer rotates by size). Undefined when there is none left uncompressed.
   */
  tailBefore(missing: number, logIsEmpty: boolean): { file: OpenLog; range: LogRange } | undefined {
    const newest = this.rotatedNames().at(-1);
    if (newest === undefined || missing <= 0) return undefined;
    let file: OpenLog;
    try {
      file = OpenLog.open(this.path, join(dirname(this.path), newest));
    } catch {
      return undefined;
    }
    if (file.inode === this.inode) {
      // Rotated since the tail was taken: this very file, already being read.
      file[Symbol.dispose]();
      return undefined;
    }
    const end = file.size();
    return { file, range: { start: tailStart(file.fd, end, missing, logIsEmpty).start, end } };
  }

  /** The uncompressed rotated files beside the log, oldest first (their names sort by time). */
  private rotatedNames(): string[] {
    const prefix = `${basename(this.path)}.`;
    return readdirSync(dirname(this.path))
      .filter((name) => name.startsWith(prefix) && !name.endsWith(".gz"))
      .sort();
  }

  /**
   * Hands the bytes in [start, end) to `onChunk`, LOG_CHUNK_BYTES at a time, waiting on each (a slow
   * reader holds the file read back); stops early when `signal` aborts. Returns where it stopped.
   */
  async read(range: LogRange, onChunk: (bytes: Uint8Array) => void | Promise<void>, signal?: AbortSignal): Promise<number> {
    let offset = range.start;
    while (offset < range.end && !signal?.aborted) {
      const buffer = Buffer.alloc(Math.min(LOG_CHUNK_BYTES, range.end - offset));
      const read = readSync(this.fd, buffer, 0, buffer.length, offset);
      if (read === 0) break;
      offset += read;
      await onChunk(buffer.subarray(0, read));
    }
    return offset;
  }

  /** The log's name holds another file: the writer rotated this one away, and writes no more to it. */
  rotated(): boolean {
    try {
      return statSync(this.path).ino !== this.inode;
    } catch {
      // Gone with its pod: nothing newer to move to.
      return false;
    }
  }

  [Symbol.dispose](): void {
    closeSync(this.fd);
  }
}

/**
 * Where the last `lines` lines of [0, end) start, and how many newlines were counted on the way (as
 * many as asked unless the file's start came first). `skipLastNewline`: the byte at end-1 ends the
 * text, so a newline there does not start a line.
 */
function tailStart(fd: number, end: number, lines: number, skipLastNewline: boolean): { start: number; found: number } {
  if (lines === 0) return { start: end, found: 0 };
  const buffer = Buffer.alloc(LOG_CHUNK_BYTES);
  // Every newline but the text's last byte ends the line before a kept one.
  let newlines = 0;
  let position = end;
  while (position > 0) {
    const size = Math.min(LOG_CHUNK_BYTES, position);
    position -= size;
    readSync(fd, buffer, 0, size, position);
    for (let i = size - 1; i >= 0; i--) {
      if (buffer[i] !== 0x0a) continue;
      if (skipLastNewline && position + i === end - 1) continue;
      if (++newlines === lines) return { start: position + i + 1, found: newlines };
    }
  }
  return { start: 0, found: newlines };
}
