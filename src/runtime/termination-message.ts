/**
 * The termination message file, as the kubelet's makeMounts and getTerminationMessage keep it: a
 * fresh empty file per container attempt on the host, world-writable so a container of any user
 * can write it, mounted at the container's terminationMessagePath; at the exit its end is read.
 * Only a runtime that can mount a file into the container (docker) makes one: nothing is ever
 * written at the path on the host itself.
 */
import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** kubecontainer.MaxContainerTerminationMessageLength: the most of the file a message keeps (its end). */
export const MAX_TERMINATION_MESSAGE_BYTES = 4 * 1024;
/** kubecontainer.MaxContainerTerminationMessageLogLines: the log lines a FallbackToLogsOnError message reads. */
export const MAX_TERMINATION_MESSAGE_LOG_LINES = 80;
/** kubecontainer.MaxContainerTerminationMessageLogLength: the most of those lines it keeps (their end). */
export const MAX_TERMINATION_MESSAGE_LOG_BYTES = 2 * 1024;

/**
 * Creates attempt `attempt`'s empty termination file of `container` under `dir` and returns its
 * path. The random part keeps a repeated attempt number (a start retried after a crash of ours)
 * from reading an older attempt's message, as the kubelet's random name does.
 */
export function createTerminationFile(dir: string, container: string, attempt: number): string {
  const containerDir = join(dir, container);
  mkdirSync(containerDir, { recursive: true });
  const path = join(containerDir, `${attempt}-${crypto.randomUUID().slice(0, 8)}`);
  writeFileSync(path, "");
  chmodSync(path, 0o666); // the create's mode is cut by the umask
  return path;
}

/**
 * The last MAX_TERMINATION_MESSAGE_BYTES of the file at `path` (tail.ReadAtMost); undefined when
 * there is no such file. A multi-byte character cut at the start is dropped whole.
 */
export function readTerminationFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, MAX_TERMINATION_MESSAGE_BYTES);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, size - length);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The end of a log as a FallbackToLogsOnError message keeps it: its last MAX_TERMINATION_MESSAGE_LOG_BYTES. */
export function tailOfLog(log: string): string {
  return lastBytes(log, MAX_TERMINATION_MESSAGE_LOG_BYTES);
}

/** The last `max` bytes of `text` in UTF-8, as the kubelet's ring buffer keeps them. */
export function lastBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= max ? text : bytes.subarray(bytes.length - max).toString("utf8");
}
