/**
 * Where the state database lives (DESIGN.md's contract): `--db PATH`, else `$MINIKUBELET_DB`, else
 * `/var/lib/minikubelet/state.db` as root, else `$XDG_STATE_HOME/minikubelet/state.db` or
 * `~/.local/state/minikubelet/state.db`. Pure apart from its defaults, so tests pass an env.
 */
import { realpathSync } from "./sync-fs.ts";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";

export interface DbPathEnv {
  env?: Record<string, string | undefined>;
  /** The effective uid; root (0) gets the system path. */
  uid?: number;
  home?: string;
}

/** The absolute database path for a `--db` value (undefined or "" when the flag was not given). */
export function resolveDbPath(flag?: string, context: DbPathEnv = {}): string {
  const env = context.env ?? process.env;
  if (flag) return canonical(resolve(flag));
  if (env.MINIKUBELET_DB) return canonical(resolve(env.MINIKUBELET_DB));
  const uid = context.uid ?? process.getuid?.() ?? -1;
  if (uid === 0) return canonical("/var/lib/minikubelet/state.db");
  const stateHome = env.XDG_STATE_HOME || join(context.home ?? env.HOME ?? homedir(), ".local", "state");
  return canonical(resolve(stateHome, "minikubelet", "state.db"));
}

/**
 * The runtime root of the agent of `dbPath`: `state.db` keeps its process runtime's pods under
 * `state.db.runtime/process` and docker's emptyDirs under `state.db.runtime/volumes`. Named after
 * the database, so two databases in one directory never share a root, and covered by its lock.
 */
export function runtimeRootOf(dbPath: string): string {
  return `${dbPath}.runtime`;
}

/**
 * Where the process runtime of `dbPath`'s agent keeps its records when the host has a tmpfs for
 * them (host/volatile-state.ts gives `base`): a directory named by the database's path, so each
 * database has its own, as it has its own runtime root.
 */
export function runtimeStateRootOf(dbPath: string, base: string): string {
  // Required here, not imported: the commands that only read the database never load node:crypto.
  const { createHash } = require("node:crypto") as typeof import("node:crypto");
  return join(base, createHash("sha256").update(dbPath).digest("hex").slice(0, 16));
}

/**
 * Symlinks resolved, so one database reached by two names has one lock file and one runtime root.
 * A path that does not exist yet keeps its name under its directory's real path.
 */
function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}
