/**
 * Reading one file from the manifest directory, which may hold anything. As in the kubelet's file
 * source, the entry is stat'ed first (following a symlink) and only a regular file is read: a
 * directory is not recursed into, and a FIFO, a socket or a device is never opened (a FIFO would
 * block the scan until a writer came; a device may act on being opened).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";

export type FileRead = { text: string } | { tooLarge: number } | { refused: string; cause?: unknown };

/** What a non-regular entry is, in words. */
export function entryKind(stat: Stats): string {
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "neither";
}

/** Why a stat'ed entry is not read, or undefined for a regular file. Wording after the kubelet's log lines. */
export function notRegular(stat: Stats): string | undefined {
  if (stat.isDirectory()) return "is a directory: not recursing into manifest path";
  if (!stat.isFile()) return `is not a directory or regular file (${entryKind(stat)}): not read`;
  return undefined;
}

/**
 * Reads `path` as UTF-8 if it is a regular file of at most `maxBytes`. Between the stat and the
 * open the entry may be swapped: it is opened non-blocking (a FIFO swapped in cannot hang the
 * read) and checked again on the open descriptor, so only the file that was stat'ed is read.
 */
export function readRegularFile(path: string, maxBytes: number): FileRead {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch (error) {
    return cannotRead(error);
  }
  const refusal = notRegular(stat);
  if (refusal) return { refused: refusal };
  if (stat.size > maxBytes) return { tooLarge: stat.size };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    return cannotRead(error);
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.ino !== stat.ino || opened.dev !== stat.dev) return { refused: "changed while it was being read: not read" };
    return readBounded(fd, opened.size, maxBytes);
  } catch (error) {
    return cannotRead(error);
  } finally {
    closeSync(fd);
  }
}

/** A system error in its own words, without the syscall and the path (the message names the file already). */
function cannotRead(error: unknown): FileRead {
  return { refused: `cannot read: ${(error as Error).message.replace(/, \w+ '.*'$/, "")}`, cause: error };
}

/** The file's text, or its size once past `maxBytes` (a file can grow after its stat). */
function readBounded(fd: number, expected: number, maxBytes: number): FileRead {
  const chunks: Buffer[] = [];
  let length = 0;
  for (;;) {
    // One read of the stat'ed size (plus a byte to see growth), then more only if the file grew.
    const chunk = Buffer.allocUnsafe(chunks.length === 0 ? expected + 1 : 64 * 1024);
    const got = readSync(fd, chunk, 0, chunk.length, null);
    if (got === 0) break;
    chunks.push(chunk.subarray(0, got));
    length += got;
    if (length > maxBytes) return { tooLarge: Math.max(length, fstatSync(fd).size) };
  }
  return { text: Buffer.concat(chunks, length).toString("utf8") };
}
