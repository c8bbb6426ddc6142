/** A container attempt's log files on disk (`log` and its rotations), as the rotation tests count them. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** `log` and `log.TIMESTAMP[.gz]` in `dir`, by name; none when the directory is gone. */
export function logFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name === "log" || name.startsWith("log."))
      .sort();
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
