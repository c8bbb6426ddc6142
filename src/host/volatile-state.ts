/**
 * Where the process runtime keeps what a start and an exit write (process-files.ts): a tmpfs, as
 * containerd keeps its state under /run and runc under /run/runc. Those files describe processes
 * that a reboot ends anyway, and on a disk each new inode is a measurable part of a restart (on an
 * ext4 without a journal, whose allocator reads the inode table past every recently freed inode,
 * more than a millisecond per start). As root: /run when it is a tmpfs, else /dev/shm; as anyone
 * else: $XDG_RUNTIME_DIR when it is a tmpfs, else /dev/shm. Each is a 0700 directory of the
 * agent's user, refused when it is anything else (a link, another user's, open to others): then
 * the state stays under the runtime root on disk, as it did before.
 */
import fs = require("node:fs");
import { join } from "node:path";
import { PRIVATE_DIR_MODE } from "./private-files.ts";

const TMPFS_MAGIC = 0x01021994;

export interface VolatileStateContext {
  uid: number;
  env: Record<string, string | undefined>;
}

/** The agent's directory on a tmpfs, made if missing; undefined when the host offers none it can trust. */
export function volatileStateBase(context: VolatileStateContext = { uid: process.getuid?.() ?? -1, env: process.env }): string | undefined {
  return firstPrivateTmpfsDir(candidates(context), context.uid);
}

/** The first `parent/name` whose parent is a tmpfs and which is, or is made, a private directory of `uid`'s. */
export function firstPrivateTmpfsDir(candidates: [parent: string, name: string][], uid: number): string | undefined {
  for (const [parent, name] of candidates) {
    if (!isTmpfs(parent)) continue;
    const dir = join(parent, name);
    try {
      fs.mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") continue;
    }
    if (isPrivateDirOf(dir, uid)) return dir;
  }
  return undefined;
}

function candidates({ uid, env }: VolatileStateContext): [parent: string, name: string][] {
  if (uid === 0) return [["/run", "minikubelet"], ["/dev/shm", "minikubelet"]];
  return [...(env.XDG_RUNTIME_DIR ? [[env.XDG_RUNTIME_DIR, "minikubelet"] as [string, string]] : []), ["/dev/shm", `minikubelet-${uid}`]];
}

function isTmpfs(path: string): boolean {
  try {
    return fs.statfsSync(path).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/** A real directory (not a link to one) of `uid`'s, closed to everyone else: in a world-writable /dev/shm, anything else may be planted. */
function isPrivateDirOf(dir: string, uid: number): boolean {
  try {
    const stat = fs.lstatSync(dir);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}
