/**
 * What an emptyDir volume takes: the bytes allocated to its files and the inodes they use, walked
 * like `du` (the kubelet's volume metrics for a directory-backed volume), and the filesystem under
 * it (a tmpfs for `medium: Memory`). Asynchronous: a large volume never holds up the agent's thread
 * for long, and it is walked at most once per volume period, not every round.
 */
import { lstat, readdir, statfs } from "node:fs/promises";
import { join } from "node:path";
import type { FsFigures } from "./node-usage.ts";

export interface VolumeReading extends FsFigures {
  at: number;
}

/** The volume's usage, or undefined when its directory is gone (a pod being removed). */
export async function readVolume(path: string, at: number): Promise<VolumeReading | undefined> {
  let fs;
  try {
    fs = await statfs(path);
  } catch {
    return undefined;
  }
  const { bytes, inodes } = await walk(path);
  return {
    at,
    capacityBytes: fs.blocks * fs.bsize,
    availableBytes: fs.bavail * fs.bsize,
    usedBytes: bytes,
    inodes: fs.files,
    inodesFree: fs.ffree,
    inodesUsed: inodes,
  };
}

/** Allocated bytes (512-byte blocks, as du counts them) and entries, the directory itself included; never follows a link. */
async function walk(dir: string): Promise<{ bytes: number; inodes: number }> {
  let bytes = 0;
  let inodes = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    try {
      const stat = await lstat(current);
      bytes += stat.blocks * 512;
      inodes += 1;
      if (!stat.isDirectory()) continue;
      for (const name of await readdir(current)) pending.push(join(current, name));
    } catch {
      // Removed while walked: what is gone takes nothing.
    }
  }
  return { bytes, inodes };
}
