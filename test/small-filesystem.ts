/**
 * A filesystem of a few MiB that a test mounts itself (as root) and fills to the last byte, for
 * what an agent or a runtime does on a full disk (ENOSPC, SQLITE_FULL) and once space is freed.
 * A tmpfs: no image, no loop device, gone with its unmount.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SmallFilesystem {
  readonly path: string;
  /** Writes a filler file until the filesystem refuses another byte. */
  fill(): void;
  /** Removes the filler: the space is back. */
  free(): void;
  /** Unmounts (lazily, should a process still hold a file there) and removes a mount point it made. */
  unmount(): void;
}

/** Mounted on `at` (an existing directory, whose contents it hides) or on a new temp directory. */
export function mountSmallFilesystem(sizeBytes: number, at?: string): SmallFilesystem {
  const path = at ?? mkdtempSync(join(tmpdir(), "minikubelet-small-fs-"));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${sizeBytes},mode=0755`, "tmpfs", path], { stderr: "pipe" });
  if (mounted.exitCode !== 0) {
    if (!at) rmSync(path, { recursive: true, force: true });
    throw new Error(`mount -t tmpfs on ${path} failed (these tests run as root): ${mounted.stderr.toString().trim()}`);
  }
  const filler = join(path, "filler");
  return {
    path,
    fill() {
      const fd = openSync(filler, "a");
      try {
        // Large writes first, then smaller ones for the last partly used pages.
        for (const size of [1 << 20, 1 << 16, 1 << 12, 1]) {
          const chunk = Buffer.alloc(size, 120);
          try {
            for (;;) writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      Bun.spawnSync(["umount", "-l", path]);
      if (!at) rmSync(path, { recursive: true, force: true });
    },
  };
}
