/**
 * Writes a volume's files the way the kubelet's AtomicWriter (pkg/volume/util/atomic_writer.go)
 * does, so a reader never sees half of an update: the files go into a new hidden directory
 * `..2006_01_02_15_04_05.NNNN`, the `..data` symlink is swapped to it with one rename, and each
 * top-level name the user sees is a symlink through `..data`. Then the previous directory and the
 * names no longer written are removed. A payload equal to what `..data` holds writes nothing.
 */
import { chownGroup } from "../../host/chown-group.ts";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The symlink readers go through; it names the directory holding the current files. */
export const DATA_DIR = "..data";
const DATA_TMP = "..data_tmp";

/** A file to write: its path inside the volume (relative, no `..`), content and mode. */
export interface PayloadFile {
  path: string;
  /** Text as UTF-8; a Secret's or a ConfigMap's binaryData's bytes as they are. */
  content: string | Uint8Array;
  mode: number;
}

/** Go's `..2006_01_02_15_04_05.` layout of the directory name, from the agent's clock. */
function timestampPrefix(now: number): string {
  const d = new Date(now);
  const two = (n: number) => String(n).padStart(2, "0");
  return `..${d.getUTCFullYear()}_${two(d.getUTCMonth() + 1)}_${two(d.getUTCDate())}_${two(d.getUTCHours())}_${two(d.getUTCMinutes())}_${two(d.getUTCSeconds())}.`;
}

/**
 * True when the payload was written, false when `..data` already held it. `group` (the pod's
 * fsGroup) owns what is written, as SetVolumeOwnership leaves a volume: the caller widens the
 * files' modes to the group.
 */
export function writeAtomically(targetDir: string, payload: readonly PayloadFile[], now: number, group?: number): boolean {
  mkdirSync(targetDir, { recursive: true, mode: 0o755 });
  const current = currentDataDir(targetDir);
  if (current && holdsPayload(join(targetDir, current), payload)) return false;

  const tsDir = mkdtempSync(join(targetDir, timestampPrefix(now)));
  // mkdtemp makes it 0700: containers running as another user must read through it.
  chmodSync(tsDir, 0o755);
  const own = (path: string) => group !== undefined && chownGroup(path, group);
  own(tsDir);
  for (const file of payload) {
    const full = join(tsDir, file.path);
    for (let dir = dirname(full); dir.length > tsDir.length && !existsSync(dir); dir = dirname(dir)) {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      own(dir);
    }
    writeFileSync(full, file.content, { mode: file.mode });
    // writeFile's mode passes through the umask; the kubelet sets it exactly.
    chmodSync(full, file.mode);
    own(full);
  }
  const tmpLink = join(targetDir, DATA_TMP);
  rmSync(tmpLink, { force: true });
  symlinkSync(tsDir.slice(targetDir.length + 1), tmpLink);
  renameSync(tmpLink, join(targetDir, DATA_DIR));

  const visible = new Set(payload.map((file) => file.path.split("/")[0]!));
  for (const name of visible) {
    const link = join(targetDir, name);
    if (isSymlink(link)) continue;
    symlinkSync(join(DATA_DIR, name), link);
  }
  if (current) rmSync(join(targetDir, current), { recursive: true, force: true });
  for (const name of readdirSync(targetDir)) {
    if (!name.startsWith("..") && !visible.has(name) && isSymlink(join(targetDir, name))) rmSync(join(targetDir, name), { force: true });
  }
  return true;
}

function currentDataDir(targetDir: string): string | undefined {
  try {
    return readlinkSync(join(targetDir, DATA_DIR));
  } catch {
    return undefined;
  }
}

/** Same files, same contents and modes, nothing else. */
function holdsPayload(dir: string, payload: readonly PayloadFile[]): boolean {
  if (!existsSync(dir)) return false;
  if (countFiles(dir) !== payload.length) return false;
  return payload.every((file) => {
    const full = join(dir, file.path);
    try {
      if ((statSync(full).mode & 0o777) !== file.mode) return false;
      const content = typeof file.content === "string" ? Buffer.from(file.content) : file.content;
      return readFileSync(full).equals(content);
    } catch {
      return false;
    }
  });
}

function countFiles(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) count += entry.isDirectory() ? countFiles(join(dir, entry.name)) : 1;
  return count;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
