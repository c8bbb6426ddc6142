/**
 * The reads the API draws ConfigMaps, Secrets and ServiceAccounts from (migrations/0011), on its
 * read-only connection, each one indexed scan.
 */
import type { Database } from "bun:sqlite";
import { OBJECT_COLUMNS, objectRow, type ObjectResource, type StoredObject } from "./object-store.ts";

/** The live objects of a resource (of one namespace, or all), in list order: namespace, then name. */
export function liveObjects(db: Database, resource: ObjectResource, namespace?: string): StoredObject[] {
  if (namespace === undefined) {
    return db.query(`SELECT ${OBJECT_COLUMNS} FROM api_objects WHERE resource = ? AND deleted = 0 ORDER BY namespace, name`).all(resource).map(objectRow);
  }
  return db.query(`SELECT ${OBJECT_COLUMNS} FROM api_objects WHERE resource = ? AND namespace = ? AND deleted = 0 ORDER BY name`).all(resource, namespace).map(objectRow);
}

/** The live object of that name, if any. */
export function liveObject(db: Database, resource: ObjectResource, namespace: string, name: string): StoredObject | undefined {
  const row = db.query(`SELECT ${OBJECT_COLUMNS} FROM api_objects WHERE resource = ? AND namespace = ? AND name = ? AND deleted = 0`).get(resource, namespace, name);
  return row ? objectRow(row) : undefined;
}

/** Rows of a resource written after `revision` (deleted ones included), oldest first, at most `limit`. */
export function objectsChangedSince(db: Database, resource: ObjectResource, revision: number, limit: number): StoredObject[] {
  return db.query(`SELECT ${OBJECT_COLUMNS} FROM api_objects WHERE resource = ? AND revision > ? ORDER BY revision LIMIT ?`).all(resource, revision, limit).map(objectRow);
}

/** Whether a pod of that namespace, name and uid exists: live in the loop's record, or created through the API and not yet gone. */
export function podExists(db: Database, namespace: string, name: string, uid: string): boolean {
  const found = db
    .query("SELECT 1 FROM api_pods WHERE uid = ? AND namespace = ? AND name = ? UNION ALL SELECT 1 FROM pods WHERE uid = ? AND namespace = ? AND name = ? AND deleted_at IS NULL LIMIT 1")
    .get(uid, namespace, name, uid, namespace, name);
  return found !== null;
}

/** The uid of the pod of that namespace and name, if one exists (the API's first, as it is the newest). */
export function podUid(db: Database, namespace: string, name: string): string | undefined {
  const row = db
    .query("SELECT uid FROM api_pods WHERE namespace = ? AND name = ? UNION ALL SELECT uid FROM pods WHERE namespace = ? AND name = ? AND deleted_at IS NULL LIMIT 1")
    .get(namespace, name, namespace, name) as { uid: string } | null;
  return row?.uid;
}
