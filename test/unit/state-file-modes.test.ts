/**
 * The agent's state is its owner's alone (issue 26): the database, its -wal and -shm are 0600 and a
 * database directory the agent creates is 0700, whatever the umask; an older agent's 0644 files are
 * narrowed at start. The --status-file (each pod's spec, env included) is 0600 too.
 */
import { expect, test } from "bun:test";
import { chmodSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { openAgentDatabase } from "../../src/store/open.ts";
import { writeStatusFile } from "../../src/agent/status-file.ts";
import { tempDir } from "../store-fixtures.ts";

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/** Runs `body` under a permissive umask, as a shell with umask 022 or 002 would start the agent. */
function withUmask<T>(mask: number, body: () => T): T {
  const before = process.umask(mask);
  try {
    return body();
  } finally {
    process.umask(before);
  }
}

test("the database, its -wal and -shm are 0600 and the directory the agent creates is 0700", () => {
  using dir = tempDir();
  const dbDir = join(dir.path, "state", "minikubelet");
  const path = join(dbDir, "state.db");
  const agent = withUmask(0o002, () => openAgentDatabase(path));
  try {
    agent.db.run("CREATE TABLE probe_modes (x INTEGER)");
    agent.db.run("INSERT INTO probe_modes VALUES (1)");
    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(existsSync(`${path}-shm`)).toBe(true);
    expect({ db: modeOf(path), wal: modeOf(`${path}-wal`), shm: modeOf(`${path}-shm`) }).toEqual({ db: "600", wal: "600", shm: "600" });
    expect({ dir: modeOf(dbDir), parent: modeOf(join(dir.path, "state")) }).toEqual({ dir: "700", parent: "700" });
  } finally {
    agent.close();
  }
});

test("an older agent's 0644 database, -wal and -shm are narrowed to 0600 at start", () => {
  using dir = tempDir();
  const path = join(dir.path, "state.db");
  withUmask(0o022, () => {
    const old = openAgentDatabase(path);
    old.db.run("CREATE TABLE probe_modes (x INTEGER)");
    old.close();
  });
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o644);
  const agent = openAgentDatabase(path);
  try {
    agent.db.run("INSERT INTO probe_modes VALUES (1)");
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect({ file, mode: modeOf(file) }).toEqual({ file, mode: "600" });
  } finally {
    agent.close();
  }
});

test("the --status-file is 0600 under umask 022, the first write and every later one", () => {
  using dir = tempDir();
  const file = join(dir.path, "status.json");
  withUmask(0o022, () => writeStatusFile(file, []));
  expect(modeOf(file)).toBe("600");
  withUmask(0o022, () => writeStatusFile(file, []));
  expect(modeOf(file)).toBe("600");
});
