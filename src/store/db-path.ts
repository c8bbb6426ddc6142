/**
 * Where the state database lives (DESIGN.md's contract): --db, else $MINIKUBELET_DB, else
 * /var/lib/minikubelet/state.db as root, else the XDG state directory.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export function resolveDbPath(flag?: string, env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? -1): string {
  if (flag) return resolve(flag);
  if (env.MINIKUBELET_DB) return resolve(env.MINIKUBELET_DB);
  if (uid === 0) return "/var/lib/minikubelet/state.db";
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(stateHome, "minikubelet", "state.db");
}
