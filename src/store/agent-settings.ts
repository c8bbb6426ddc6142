/**
 * The settings an agent ran with that commands reading the database afterwards need (migration
 * 0006): the restart back-off, so `triage` can say when a back-off resets without being told.
 */
import type { Database } from "bun:sqlite";
import type { BackoffSettings } from "../kubelet/backoff.ts";

/** Called once at agent start: the newest agent's settings are the ones its records follow. */
export function recordBackoffSettings(db: Database, settings: BackoffSettings, now: number): void {
  db.query(
    `INSERT INTO agent_backoff (singleton, base_ms, cap_ms, recorded_at) VALUES (1, ?, ?, ?)
     ON CONFLICT (singleton) DO UPDATE SET base_ms = excluded.base_ms, cap_ms = excluded.cap_ms, recorded_at = excluded.recorded_at`,
  ).run(settings.baseMs, settings.capMs, now);
}
