/**
 * The private directory of the API server's Unix socket (`$TMPDIR/minikubelet-api-XXXXXX/api.sock`:
 * a database's own directory may be too deep for a socket's 108-byte path). An `owner` file in it
 * names the server's process (pid and kernel start time) and its database, so that what a
 * `kill -9`'d server left behind is removed by the next server on the same database, and nothing
 * else is: a directory whose owner file is missing or unreadable, names another database, or a
 * process that still runs, is left alone.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLiveProcess, processStartTicks } from "../../host/process-liveness.ts";

const PREFIX = "minikubelet-api-";

/**
 * Removes this database's leftover socket directories, then makes a fresh one (0700) owned by this
 * process; returns its path. A server on no database (`""`, tests) neither sweeps nor is swept.
 */
export function makeSocketDir(dbPath: string): string {
  if (dbPath !== "") sweepSocketDirs(dbPath);
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  if (dbPath !== "") writeFileSync(join(dir, "owner"), `${JSON.stringify({ pid: process.pid, startTicks: processStartTicks(process.pid) ?? null, database: dbPath })}\n`, { mode: 0o600 });
  return dir;
}

/** The leftover socket directories of `dbPath` whose server is dead, removed; returns their paths. */
export function sweepSocketDirs(dbPath: string, root = tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(root, name);
    if (!isLeftoverOf(dir, dbPath)) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

function isLeftoverOf(dir: string, dbPath: string): boolean {
  try {
    // Ours only: a real directory of this user (never a symlink someone planted in a shared /tmp).
    const stat = lstatSync(dir);
    if (!stat.isDirectory() || stat.uid !== process.getuid?.()) return false;
    const owner = JSON.parse(readFileSync(join(dir, "owner"), "utf8")) as { pid?: unknown; startTicks?: unknown; database?: unknown };
    if (owner.database !== dbPath || typeof owner.pid !== "number" || !Number.isInteger(owner.pid) || owner.pid <= 0) return false;
    return !isLiveProcess(owner.pid, typeof owner.startTicks === "string" ? owner.startTicks : undefined);
  } catch {
    return false;
  }
}
