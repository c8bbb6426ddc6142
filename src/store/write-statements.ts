/** Every statement the agent's writer runs, prepared once per connection and reused by every pass. */
import type { Database, Statement } from "bun:sqlite";
import { MAX_REVISION_SQL } from "./revisions.ts";

export interface WriteStatements {
  maxRevision: Statement;
  upsertPod: Statement;
  upsertContainer: Statement;
  upsertAttempt: Statement;
  clearBackoff: Statement;
  insertBackoff: Statement;
  upsertEvent: Statement;
  livePods: Statement;
  allBackoff: Statement;
  /** A pod's event count (kept by triggers, migrations/0008): one primary-key read. */
  eventCount: Statement;
  /** A pod's oldest events, by the events_by_pod index: what goes when the pod is over its cap. */
  pruneOldestOfPod: Statement;
  /** Up to a batch of events past the TTL, oldest first, by the events_by_time index. */
  pruneExpiredEvents: Statement;
  /** Up to a batch of deleted pods past the TTL, by the pods_deleted index. */
  pruneExpiredPods: Statement;
  /** Up to a batch of deleted pods beyond the newest N kept, by the pods_deleted index. */
  pruneDeletedPodsOverCap: Statement;
  /** Records the highest revision retention deleted (what a watch from before it may have missed). */
  raiseCompaction: Statement;
  refusedFiles: Statement;
  upsertRefused: Statement;
  deleteRefused: Statement;
  /** Removes the containers and attempts of a deleted pod whose uid starts a new incarnation. */
  clearDeletedIncarnation: Statement[];
}

/** The pod uid of a back-off key (`podUid/container`, or `podUid/container/pull`). */
export function backoffPodUid(key: string): string {
  return key.slice(0, key.indexOf("/"));
}

/**
 * Retention's statements, named so a test can ask SQLite for their plans: each must walk only the
 * front of an index (what it deletes), never the table, whatever the history holds.
 */
export const RETENTION_SQL = {
  eventCount: "SELECT events FROM event_counts WHERE pod_uid = ?",
  pruneOldestOfPod: "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE pod_uid = ? ORDER BY last_at, id LIMIT ?) RETURNING revision",
  pruneExpiredEvents: "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE last_at < ? ORDER BY last_at LIMIT ?) RETURNING revision",
  pruneExpiredPods: `
    DELETE FROM pods WHERE uid IN (
      SELECT uid FROM pods WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY deleted_at LIMIT ?) RETURNING revision`,
  pruneDeletedPodsOverCap: `
    DELETE FROM pods WHERE uid IN (
      SELECT uid FROM pods WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT ? OFFSET ?) RETURNING revision`,
} as const;

export function prepareWrites(db: Database): WriteStatements {
  return {
    clearDeletedIncarnation: [
      db.prepare("DELETE FROM attempts WHERE pod_uid = ?1 AND EXISTS (SELECT 1 FROM pods WHERE uid = ?1 AND deleted_at IS NOT NULL)"),
      db.prepare("DELETE FROM containers WHERE pod_uid = ?1 AND EXISTS (SELECT 1 FROM pods WHERE uid = ?1 AND deleted_at IS NOT NULL)"),
    ],
    maxRevision: db.prepare(MAX_REVISION_SQL),
    upsertPod: db.prepare(`
      INSERT INTO pods (uid, pod_key, namespace, name, config_hash, source, created_at, deletion_requested_at,
                        deleted_at, phase, record_json, object_json, updated_at, revision, created_revision)
      VALUES ($uid, $pod_key, $namespace, $name, $config_hash, $source, $created_at, $deletion_requested_at,
              $deleted_at, $phase, $record_json, $object_json, $updated_at, $revision, $revision)
      ON CONFLICT (uid) DO UPDATE SET
        pod_key = excluded.pod_key, namespace = excluded.namespace, name = excluded.name,
        config_hash = excluded.config_hash, source = excluded.source,
        created_at = excluded.created_at, deletion_requested_at = excluded.deletion_requested_at,
        deleted_at = excluded.deleted_at, phase = excluded.phase, record_json = excluded.record_json,
        object_json = excluded.object_json, updated_at = excluded.updated_at,
        revision = CASE WHEN $changed THEN excluded.revision ELSE pods.revision END,
        created_revision = CASE WHEN pods.deleted_at IS NOT NULL AND excluded.deleted_at IS NULL
                                THEN excluded.created_revision ELSE pods.created_revision END`),
    upsertContainer: db.prepare(`
      INSERT INTO containers (pod_uid, name, kind, position, state, reason, container_id, restart_count, ready, started, started_at)
      VALUES ($pod_uid, $name, $kind, $position, $state, $reason, $container_id, $restart_count, $ready, $started, $started_at)
      ON CONFLICT (pod_uid, name) DO UPDATE SET
        kind = excluded.kind, position = excluded.position, state = excluded.state, reason = excluded.reason,
        container_id = excluded.container_id, restart_count = excluded.restart_count, ready = excluded.ready,
        started = excluded.started, started_at = excluded.started_at`),
    upsertAttempt: db.prepare(`
      INSERT INTO attempts (pod_uid, container, attempt, runtime_id, started_at, finished_at, exit_code, reason, signal, log_path, kill_cause, grace_expired)
      VALUES ($pod_uid, $container, $attempt, $runtime_id, $started_at, $finished_at, $exit_code, $reason, $signal, $log_path, $kill_cause, $grace_expired)
      ON CONFLICT (pod_uid, container, attempt) DO UPDATE SET
        runtime_id = excluded.runtime_id,
        started_at = coalesce(excluded.started_at, attempts.started_at),
        finished_at = coalesce(excluded.finished_at, attempts.finished_at),
        exit_code = coalesce(excluded.exit_code, attempts.exit_code),
        reason = coalesce(excluded.reason, attempts.reason),
        signal = coalesce(excluded.signal, attempts.signal),
        log_path = coalesce(excluded.log_path, attempts.log_path),
        kill_cause = coalesce(excluded.kill_cause, attempts.kill_cause),
        grace_expired = max(excluded.grace_expired, attempts.grace_expired)`),
    clearBackoff: db.prepare("DELETE FROM backoff WHERE pod_uid = ?"),
    insertBackoff: db.prepare("INSERT OR REPLACE INTO backoff (key, pod_uid, delay_ms, updated_at) VALUES (?, ?, ?, ?)"),
    upsertEvent: db.prepare(`
      INSERT INTO events (pod_uid, pod_key, namespace, pod, container, type, reason, message, count, first_at, last_at, revision, created_revision)
      VALUES ($pod_uid, $pod_key, $namespace, $pod, $container, $type, $reason, $message, 1, $at, $at, $revision, $revision)
      ON CONFLICT (pod_uid, container, type, reason, message) DO UPDATE SET
        count = events.count + 1, last_at = max(events.last_at, excluded.last_at), revision = excluded.revision
      RETURNING count`),
    livePods: db.prepare("SELECT record_json, object_json FROM pods WHERE deleted_at IS NULL ORDER BY namespace, name"),
    allBackoff: db.prepare("SELECT key, delay_ms, updated_at FROM backoff ORDER BY key"),
    eventCount: db.prepare(RETENTION_SQL.eventCount),
    pruneOldestOfPod: db.prepare(RETENTION_SQL.pruneOldestOfPod),
    pruneExpiredEvents: db.prepare(RETENTION_SQL.pruneExpiredEvents),
    pruneExpiredPods: db.prepare(RETENTION_SQL.pruneExpiredPods),
    pruneDeletedPodsOverCap: db.prepare(RETENTION_SQL.pruneDeletedPodsOverCap),
    raiseCompaction: db.prepare("UPDATE compaction SET revision = max(revision, ?)"),
    refusedFiles: db.prepare("SELECT file, uid, namespace, name, reason, issues_json, first_seen_at FROM invalid_manifests"),
    upsertRefused: db.prepare(`
      INSERT INTO invalid_manifests (file, uid, namespace, name, reason, issues_json, object_json, first_seen_at, updated_at, revision)
      VALUES ($file, $uid, $namespace, $name, $reason, $issues_json, $object_json, $first_seen_at, $updated_at, $revision)
      ON CONFLICT (file) DO UPDATE SET
        uid = excluded.uid, namespace = excluded.namespace, name = excluded.name, reason = excluded.reason,
        issues_json = excluded.issues_json, object_json = excluded.object_json, updated_at = excluded.updated_at,
        revision = excluded.revision`),
    deleteRefused: db.prepare("DELETE FROM invalid_manifests WHERE file = ?"),
  };
}
