/**
 * The process runtime's memory-backed emptyDir: a tmpfs mounted on the volume's directory, sized as
 * the kubelet's emptyDir plugin sizes one (manifest/memory-medium.ts). Its pages are charged to the memory
 * cgroup of the container that writes them, so they count toward the pod's memory. Mounting needs
 * root; without it the volume stays a directory on disk and the caller is told why, to say once.
 */
import { statSync } from "node:fs";
import { dirname } from "node:path";

/** Whether `dir` is a mount point: on another filesystem than its parent. */
export function isMountPoint(dir: string): boolean {
  try {
    return statSync(dir).dev !== statSync(dirname(dir)).dev;
  } catch {
    return false;
  }
}

/**
 * Mounts a tmpfs of `sizeBytes` (undefined: the kernel's default) on `dir` unless one is there (a sandbox set up again, an adopted pod); resolves
 * with why it could not, or undefined once mounted.
 */
export async function mountTmpfs(dir: string, sizeBytes: number | undefined): Promise<string | undefined> {
  if (isMountPoint(dir)) return undefined;
  const uid = process.getuid?.();
  if (uid !== 0) return `mounting a tmpfs needs root (the agent runs as uid ${uid})`;
  const options = ["mode=1777", ...(sizeBytes ? [`size=${sizeBytes}`] : [])].join(",");
  const child = Bun.spawn(["mount", "-t", "tmpfs", "-o", options, "tmpfs", dir], { stdout: "ignore", stderr: "pipe" });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  return code === 0 ? undefined : `mount -t tmpfs failed: ${stderr.trim() || `exit code ${code}`}`;
}

/** Unmounts a tmpfs from `dir` (lazily: a process still inside does not keep the pod's removal waiting). */
export async function unmountTmpfs(dir: string): Promise<void> {
  if (!isMountPoint(dir)) return;
  await Bun.spawn(["umount", "-l", dir], { stdout: "ignore", stderr: "ignore" }).exited;
}

/** The Warning event's message for a memory medium that fell back to disk. */
export function memoryMediumFallback(volume: string, why: string): string {
  return `emptyDir volume ${JSON.stringify(volume)} asks for medium Memory, but ${why}: it is a directory on the node's disk`;
}
