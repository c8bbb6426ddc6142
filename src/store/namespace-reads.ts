/**
 * The reads the API draws its Namespaces from, on its read-only connection: the stored rows
 * (migrations/0010) and the namespaces that exist because they hold a pod. Pods are few (retention
 * drops deleted ones), so each read is one indexed scan.
 */
import type { Database } from "bun:sqlite";
import { NAMESPACE_COLUMNS, namespaceRow, type StoredNamespace } from "./namespace-store.ts";

/** The rows that are not gone, by name. */
export function liveNamespaceRows(db: Database): StoredNamespace[] {
  return db.query(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE deleted = 0 ORDER BY name`).all().map(namespaceRow);
}

/** The row of `name`, gone or not. */
export function namespaceRowNamed(db: Database, name: string): StoredNamespace | undefined {
  const row = db.query(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE name = ?`).get(name);
  return row ? namespaceRow(row) : undefined;
}

/** Rows written after `revision` (gone ones included), oldest first. */
export function namespaceRowsChangedSince(db: Database, revision: number): StoredNamespace[] {
  return db.query(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE revision > ? ORDER BY revision`).all(revision).map(namespaceRow);
}

/**
 * The namespaces that hold a pod (a live one, or an API pod the loop has not checkpointed or
 * removed yet), each with the revision that created its oldest such pod: since then it exists.
 */
export function podNamespaces(db: Database): Map<string, number> {
  const rows = db
    .query(
      `SELECT namespace, min(created) AS created FROM (
         SELECT namespace, created_revision AS created FROM pods WHERE deleted_at IS NULL
         UNION ALL SELECT namespace, resource_version FROM api_pods)
       GROUP BY namespace`,
    )
    .all() as { namespace: string; created: number }[];
  return new Map(rows.map((row) => [row.namespace, row.created]));
}

/** The namespaces whose pods changed after `revision`, each with its newest such change. */
export function podNamespacesChangedSince(db: Database, revision: number): Map<string, number> {
  const rows = db.query("SELECT namespace, max(revision) AS revision FROM pods WHERE revision > ? GROUP BY namespace").all(revision) as { namespace: string; revision: number }[];
  return new Map(rows.map((row) => [row.namespace, row.revision]));
}
