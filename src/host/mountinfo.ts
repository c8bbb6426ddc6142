/**
 * The mounts /proc/self/mountinfo lists (proc(5)): each one's mount point, with the kernel's octal
 * escapes undone, its filesystem type and its superblock options.
 */
import { readFileSync } from "node:fs";

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const [fsType = "", , superOptions = ""] = right.split(" ");
    entries.push({ mountPoint: unescapeMount(left.split(" ")[4] ?? ""), fsType, superOptions: superOptions.split(",") });
  }
  return entries;
}

/** This process's mounts; undefined when /proc/self/mountinfo cannot be read. */
export function readMountinfo(): string | undefined {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return undefined;
  }
}

/** Space, tab, newline and backslash come as `\040` and the like. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
