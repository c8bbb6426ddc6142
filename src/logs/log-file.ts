/**
 * Reading a container attempt's log file (the process runtime keeps one per attempt) in bounded
 * pieces: a tail is found by scanning back from the end, never by reading the file whole, and every
 * read is a fixed-size chunk, so a multi-GB log costs what the answer costs.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";

/** One read's size, and the most a single chunk handed to a consumer holds. */
export const LOG_CHUNK_BYTES = 64 * 1024;

export interface LogRange {
  /** Byte offset of the first byte to serve. */
  start: number;
  /** Byte offset just past the last byte to serve (the file's size when the range was taken). */
  end: number;
}

/**
 * The bytes holding the last `tailLines` lines of the file (all of it when undefined), from its
 * size now. A last line without its newline counts as a line, as the kubelet counts it.
 */
export function tailRange(path: string, tailLines: number | undefined): LogRange {
  const fd = openSync(path, "r");
  try {
    const end = fstatSync(fd).size;
    return { start: tailLines === undefined ? 0 : tailStart(fd, end, tailLines), end };
  } finally {
    closeSync(fd);
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

/**
 * Hands the file's bytes in [start, end) to `onChunk`, LOG_CHUNK_BYTES at a time, waiting on each
 * (a slow reader holds the file read back); stops early when `signal` aborts. Returns where it stopped.
 */
export async function readRange(path: string, range: LogRange, onChunk: (bytes: Uint8Array) => void | Promise<void>, signal?: AbortSignal): Promise<number> {
  if (range.end <= range.start) return range.start;
  const fd = openSync(path, "r");
  let offset = range.start;
  try {
    while (offset < range.end && !signal?.aborted) {
      const buffer = Buffer.alloc(Math.min(LOG_CHUNK_BYTES, range.end - offset));
      const read = readSync(fd, buffer, 0, buffer.length, offset);
      if (read === 0) break;
      offset += read;
      await onChunk(buffer.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  return offset;
}

/** The file's size now, or `fallback` when it is gone (a removed attempt keeps what was served). */
export function currentSize(path: string, fallback: number): number {
  try {
    return statSync(path).size;
  } catch {
    return fallback;
  }
}

/** When the file was last written, in ms since the epoch. */
export function lastWrittenAt(path: string): number {
  return statSync(path).mtimeMs;
}
