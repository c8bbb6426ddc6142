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
