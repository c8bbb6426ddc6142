/**
 * How much of the disk (or of a tmpfs) a directory holds, as the kubelet's du-based volume metrics
 * count it: allocated blocks, each inode once, without crossing into other filesystems. Asynchronous
 * and bounded, so a volume with a million files costs a bounded walk and never a loop pass.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

export interface DirUsage {
  bytes: number;
  /** False when the walk stopped at its entry budget: `bytes` is then a lower bound. */
  complete: boolean;
}

/** Measures a directory tree; a missing directory holds nothing. */
export type MeasureDir = (path: string) => Promise<DirUsage>;

/** The most entries one measurement looks at: past a limit, a lower bound is still a verdict. */
export const DIR_USAGE_MAX_ENTRIES = 100_000;

export function measureDir(path: string, maxEntries = DIR_USAGE_MAX_ENTRIES): Promise<DirUsage> {
  return walk(path, maxEntries);
}

async function walk(root: string, maxEntries: number): Promise<DirUsage> {
  let rootStat;
  try {
    rootStat = await lstat(root);
  } catch {
    return { bytes: 0, complete: true };
  }
  const device = rootStat.dev;
  const seen = new Set<number>();
  let bytes = rootStat.blocks * 512;
  let entries = 0;
  const pending = rootStat.isDirectory() ? [root] : [];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue; // removed meanwhile
    }
    for (const name of names) {
      if (++entries > maxEntries) return { bytes, complete: false };
      const path = join(dir, name);
      let stat;
      try {
        stat = await lstat(path);
      } catch {
        continue;
      }
      // du -x: a filesystem mounted inside is not the volume's; a hard link is counted once.
      if (stat.dev !== device) continue;
      if (stat.nlink > 1 && !stat.isDirectory()) {
        if (seen.has(stat.ino)) continue;
        seen.add(stat.ino);
      }
      bytes += stat.blocks * 512;
      if (stat.isDirectory()) pending.push(path);
    }
  }
  return { bytes, complete: true };
}
