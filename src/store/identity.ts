/**
 * The state database's identity (migration 0003): what the agent labels its containers with, so it
 * can prove which containers it created, whatever directory or engine it shares with other agents.
 */
import type { Database } from "bun:sqlite";

/** The identity written when the database was created (32 hex digits). */
export function databaseIdentity(db: Database): string {
  const row = db.query("SELECT id FROM agent_identity WHERE singleton = 1").get() as { id: string } | null;
  if (!row) throw new Error("state database has no agent_identity row (migration 0003 not applied)");
  return row.id;
}

/** When the database was created (epoch ms): the creation time of what has no row of its own (the namespaces that always exist). */
export function databaseCreatedAt(db: Database): number {
  const row = db.query("SELECT created_at FROM agent_identity WHERE singleton = 1").get() as { created_at: number } | null;
  if (!row) throw new Error("state database has no agent_identity row (migration 0003 not applied)");
  return row.created_at;
}
