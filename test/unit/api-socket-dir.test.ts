/**
 * A `kill -9`'d API server leaves its socket directory (`$TMPDIR/minikubelet-api-*`, the socket in
 * it) behind: the next server on the same database removes it, and only what it can prove is its
 * database's and dead: another database's, a live server's, one with no readable owner file stay.
 */
import { afterEach, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import { startApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { realClock } from "../../src/clock.ts";
import { processStartTicks } from "../../src/host/process-liveness.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { tempDir } from "../store-fixtures.ts";

const planted: string[] = [];
afterEach(() => {
  for (const dir of planted.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A socket directory as a server left it: the owner file (or `owner` text as given) and its socket. */
function leftover(owner: object | string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), "minikubelet-api-"));
  planted.push(dir);
  if (owner !== undefined) writeFileSync(join(dir, "owner"), typeof owner === "string" ? owner : JSON.stringify(owner));
  writeFileSync(join(dir, "api.sock"), "");
  return dir;
}

async function deadPid(): Promise<number> {
  const child = spawn("true");
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

test("a new server on a database removes that database's socket directories whose server is dead, and nothing else", async () => {
  using dir = tempDir("minikubelet-socket-dir-");
  const dbPath = join(dir.path, "state.db");
  const dead = await deadPid();
  const mine = leftover({ pid: dead, startTicks: "1", database: dbPath });
  const reusedPid = leftover({ pid: process.pid, startTicks: "1", database: dbPath });
  const live = leftover({ pid: process.pid, startTicks: processStartTicks(process.pid), database: dbPath });
  const other = leftover({ pid: dead, startTicks: "1", database: join(dir.path, "other.db") });
  const unowned = leftover(undefined);
  const garbage = leftover("{not json");

  const credentials = ensureCredentials(dbPath);
  const db = new Database(":memory:");
  const context: ApiContext = { store: new StoreReader(db), dbPath, clock: realClock, nodeName: "lab", commits: new CommitBroadcast(), limits: DEFAULT_LIMITS };
  const server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context, routes: [], tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
  try {
    expect(existsSync(mine)).toBe(false);
    // A pid now another process's (its start time differs) is as dead as the server that wrote it.
    expect(existsSync(reusedPid)).toBe(false);
    for (const kept of [live, other, unowned, garbage]) expect(existsSync(kept)).toBe(true);
  } finally {
    await server.stop();
    db.close();
  }
});
