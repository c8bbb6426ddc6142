import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { triageCommand, type TriageOptions } from "../src/cli/triage.ts";
import { openAgentDatabase } from "../src/store/open.ts";
import { SqliteStore } from "../src/store/pod-store.ts";
import { harness } from "./kubelet-harness.ts";
import { ScriptedProber } from "./scripted-prober.ts";

/**
 * A kubelet on the fake runtime and fake clock, with scripted probes, checkpointing into a real
 * agent database; each attempt's output (the fake container's `logs`) is kept in a log file the
 * attempts table names, as the process runtime keeps one. `triage` then reads that database.
 */
export function triageHarness(dir: string, options: { baseSeconds?: number; capSeconds?: number } = {}) {
  const dbPath = join(dir, "state.db");
  const agent = openAgentDatabase(dbPath);
  let store: SqliteStore | undefined;
  let prober!: ScriptedProber;
  const h = harness({
    store: { savePod: (...args) => store!.savePod(...args), deletePod: (...args) => store!.deletePod(...args) },
    baseSeconds: options.baseSeconds,
    capSeconds: options.capSeconds,
    probeRunner: (runtime, clock) => (prober = new ScriptedProber(runtime, clock)),
  });
  const logPathOf = (_podUid: string, containerId: string) => {
    const path = join(dir, `${containerId}.log`);
    const container = h.runtime.containers.get(containerId);
    if (container) writeFileSync(path, container.logs);
    return existsSync(path) ? path : undefined;
  };
  store = new SqliteStore({ db: agent.db, clock: h.clock, logPathOf });
  /** Runs triage on the database; its output, its stderr and the exit code. */
  const triage = async (pod: string, opts: TriageOptions = {}) => {
    let out = "";
    let err = "";
    const code = await triageCommand(pod, { db: dbPath, ...opts }, { clock: h.clock, stdout: (t) => (out += t), stderr: (t) => (err += t) });
    // These databases have no agent: its note is agent-not-running.test.ts's subject.
    return { out, err: err.replace(/^agent not running.*\n/, ""), code };
  };
  /** The report as data (-o json). */
  const report = async (pod: string, opts: TriageOptions = {}) => JSON.parse((await triage(pod, { ...opts, output: "json" })).out);
  return { ...h, dbPath, agent, prober: () => prober, triage, report };
}
