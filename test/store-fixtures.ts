import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAgentDatabase, type AgentDatabase } from "../src/store/open.ts";
import { SqliteStore, type SqliteStoreOptions } from "../src/store/pod-store.ts";
import { harness } from "./kubelet-harness.ts";

/** A disposable directory: `using dir = tempDir()` removes it at the end of the scope. */
export function tempDir(prefix = "minikubelet-store-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

/** A kubelet on the fake runtime and fake clock, checkpointing into a fresh agent database. */
export function storeHarness(
  dir: string,
  options: Partial<SqliteStoreOptions> & {
    baseSeconds?: number;
    capSeconds?: number;
    probeRunner?: NonNullable<Parameters<typeof harness>[0]>["probeRunner"];
    allocatable?: NonNullable<Parameters<typeof harness>[0]>["allocatable"];
  } = {},
) {
  const dbPath = join(dir, "state.db");
  const agent: AgentDatabase = openAgentDatabase(dbPath);
  let store: SqliteStore | undefined;
  const proxy = {
    savePod: (...args: Parameters<SqliteStore["savePod"]>) => store!.savePod(...args),
    deletePod: (...args: Parameters<SqliteStore["deletePod"]>) => store!.deletePod(...args),
  };
  const h = harness({ store: proxy, baseSeconds: options.baseSeconds, capSeconds: options.capSeconds, probeRunner: options.probeRunner, allocatable: options.allocatable });
  store = new SqliteStore({ db: agent.db, clock: h.clock, ...options });
  return { ...h, dbPath, agent, store };
}
