/**
 * Where the state database lives (DESIGN.md's contract): `--db PATH`, else `$MINIKUBELET_DB`, else
 * `/var/lib/minikubelet/state.db` as root, else `$XDG_STATE_HOME/minikubelet/state.db` or
 * `~/.local/state/minikubelet/state.db`. Pure apart from its defaults, so tests pass an env.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export interface DbPathEnv {
  env?: Record<string, string | undefined>;
  /** The effective uid; root (0) gets the system path. */
  uid?: number;
  home?: string;
}

/** The absolute database path for a `--db` value (undefined or "" when the flag was not given). */
export function resolveDbPath(flag?: string, context: DbPathEnv = {}): string {
  const env = context.env ?? process.env;
  if (flag) return resolve(flag);
  if (env.MINIKUBELET_DB) return resolve(env.MINIKUBELET_DB);
  const uid = context.uid ?? process.getuid?.() ?? -1;
  if (uid === 0) return "/var/lib/minikubelet/state.db";
  const stateHome = env.XDG_STATE_HOME || join(context.home ?? env.HOME ?? homedir(), ".local", "state");
  return resolve(stateHome, "minikubelet", "state.db");
}
