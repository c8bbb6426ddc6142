/**
 * What the agent keeps on disk is the node's secrets: the database (every pod's env and events),
 * each container's `config.json` (its env) and its logs. Like the kubelet's /var/lib/kubelet
 * (0700), they are the owner's alone: files 0600, directories 0700. A mode given to mkdir or open
 * only ever narrows under the umask, so these modes hold whatever the umask is. Containers of the
 * process runtime run as the agent's user and so still read their own files.
 *
 * node:fs is taken with require() for the commands' start-up (see store/sync-fs.ts).
 */
import fs = require("node:fs");
import { basename, dirname, join } from "node:path";

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** `mkdir -p` where every directory it creates is 0700; one that exists keeps its mode. */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `file` empty and 0600 if it is missing (so what writes it later inherits no wider mode). */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, "a", PRIVATE_FILE_MODE));
}

/**
 * Takes group and other bits off what an older agent left 0644/0755. A symlink is never followed
 * (chmod would reach whatever it names) and a missing path is fine: tightening never fails a start
 * over a file that is not there.
 */
export function tightenMode(path: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(path);
  } catch {
    return;
  }
  if (stat.isSymbolicLink() || (stat.mode & 0o077) === 0) return;
  try {
    fs.chmodSync(path, stat.mode & 0o700);
  } catch {
    // Not ours to change (another owner's file): left as it is, the directory above still closes it.
  }
}

/**
 * Writes `file` as 0600 through a temp file beside it and a rename, so no reader ever sees it half
 * written or, for a moment, readable by others; its directory is made 0700 if missing. The temp
 * file is created exclusively (O_EXCL), so a planted name there is refused, never written through.
 */
export function writePrivateFileAtomically(file: string, content: string): void {
  makePrivateDir(dirname(file));
  const temporary = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  try {
    fs.writeFileSync(temporary, content, { mode: PRIVATE_FILE_MODE, flag: "wx" });
    fs.renameSync(temporary, file);
  } catch (error) {
    try {
      fs.unlinkSync(temporary);
    } catch {
      // Never created, or already renamed.
    }
    throw error;
  }
}
