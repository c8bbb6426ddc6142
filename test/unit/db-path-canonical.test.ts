/**
 * Issue 11: the lock file and the runtime root are derived from the database path, so one database
 * reached by two names (a symlinked directory or file) must give one path, or two agents would
 * each take a lock of their own and share the database.
 */
import { expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveDbPath, runtimeRootOf } from "../../src/store/db-path.ts";
import { acquireAgentLock } from "../../src/store/agent-lock.ts";
import { AgentLockError } from "../../src/store/errors.ts";
import { tempDir } from "../store-fixtures.ts";

test("a database reached through a symlinked directory or file resolves to one path, one lock, one runtime root", () => {
  using dir = tempDir();
  const real = join(dir.path, "real");
  mkdirSync(real);
  symlinkSync(real, join(dir.path, "alias"));
  writeFileSync(join(real, "state.db"), "");
  symlinkSync(join(real, "state.db"), join(real, "other.db"));
  const canonical = resolveDbPath(join(real, "state.db"));
  expect(resolveDbPath(join(dir.path, "alias", "state.db"))).toBe(canonical);
  expect(resolveDbPath(join(real, "other.db"))).toBe(canonical);
  expect(runtimeRootOf(resolveDbPath(join(dir.path, "alias", "state.db")))).toBe(runtimeRootOf(canonical));
  // Not created yet: the directory's real path, the name kept.
  expect(resolveDbPath(join(dir.path, "alias", "new.db"))).toBe(join(resolveDbPath(real), "new.db"));

  const held = acquireAgentLock(canonical, 1);
  try {
    expect(() => acquireAgentLock(resolveDbPath(join(dir.path, "alias", "state.db")))).toThrow(AgentLockError);
  } finally {
    held.release();
  }
});
