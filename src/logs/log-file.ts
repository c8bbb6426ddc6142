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
    const dir = dirname(this.path);
    const prefix = `${basename(this.path)}.`;
    const newest = readdirSync(dir)
      .filter((name) => name.startsWith(prefix) && !name.endsWith(".gz"))
      .sort()
      .at(-1);
    if (newest !== undefined) {
      try {
        const rotated = OpenLog.open(this.path, join(dir, newest));
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
  tail(tailLines: number | undefined): LogRange {
    const end = this.size();
    return { start: tailLines === undefined ? 0 : tailStart(this.fd, end, tailLines), end };
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

function tailStart(fd: number, end: number, lines: number): number {
  if (lines === 0) return end;
  const buffer = Buffer.alloc(LOG_CHUNK_BYTES);
  // The newline ending the last line does not start a line; every other one ends the line before a kept one.
  let newlines = 0;
  let position = end;
  let skipLastNewline = true;
  while (position > 0) {
    const size = Math.min(LOG_CHUNK_BYTES, position);
    position -= size;
    readSync(fd, buffer, 0, size, position);
    for (let i = size - 1; i >= 0; i--) {
      if (buffer[i] !== 0x0a) continue;
      if (skipLastNewline && position + i === end - 1) continue;
      if (++newlines === lines) return position + i + 1;
    }
    skipLastNewline = false;
  }
  return 0;
}
