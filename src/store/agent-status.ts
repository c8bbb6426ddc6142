/**
 * Whether an agent is writing the database a command reads. The rows are the agent's last
 * checkpoint: while no agent holds the lock nobody updates them, so `get` and `describe` say so
 * rather than show "Running" as if it were live.
 */
import { humanDuration } from "../printers/age.ts";
import { agentLockHolder } from "./agent-lock.ts";
import { openStoreReader } from "./reader.ts";
import type { StoreReader } from "./queries.ts";

/** The one stderr line for a database no agent holds, or undefined while one runs. */
export function agentNotRunningNote(path: string, store: StoreReader, now: number): string | undefined {
  if (agentLockHolder(path) !== undefined) return undefined;
  const last = store.lastUpdateAt();
  return last === undefined ? "agent not running, nothing recorded yet" : `agent not running, last update ${humanDuration(now - last)} ago`;
}

/** The same, opening the database at `--db` (or the default path) for the question. */
export function agentNotRunningNoteFor(db: string | undefined, now: number): string | undefined {
  using reader = openStoreReader(db);
  return agentNotRunningNote(reader.path, reader.store, now);
}
