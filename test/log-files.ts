/** A container attempt's log files on disk (the log and its rotations), as the rotation tests count them. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { CRI_LOG_NAME, LEGACY_LOG_NAME } from "../src/runtime/container-log-file.ts";

/** The log and `<log>.TIMESTAMP[.gz]` in `dir` (the CRI log, or an earlier monitor's raw `log`), by name; none when the directory is gone. */
export function logFiles(dir: string): string[] {
  const isLog = (name: string) => [CRI_LOG_NAME, LEGACY_LOG_NAME].some((log) => name === log || name.startsWith(`${log}.`));
  try {
    return readdirSync(dir).filter(isLog).sort();
  } catch {
    return [];
  }
}

/** Their total size: what the cap max-size x max-files bounds. */
export function logBytesOnDisk(dir: string): number {
  let total = 0;
  for (const name of logFiles(dir)) {
    try {
      total += statSync(join(dir, name)).size;
    } catch {
      // Removed between the listing and the stat.
    }
  }
  return total;
}

/** The monitor's gzips are done: a `.gz` is there and no file it is being made of is left beside it. */
export function compressionDone(dir: string): boolean {
  const names = logFiles(dir);
  return names.some((name) => name.endsWith(".gz")) && names.every((name) => !names.includes(`${name}.gz`));
}
