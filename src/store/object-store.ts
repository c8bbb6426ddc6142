/**
 * The ConfigMaps, Secrets and ServiceAccounts created through the API (migrations/0011_api_objects.sql),
 * on the agent's write connection: each write is one transaction with its revision from the shared
 * RevisionCounter, so its commit reaches open watches like a pod's. A delete keeps the row, marked
 * deleted, for the watches' DELETED; the next create of the name revives it.
 *
 * The loop reads the same rows (config/store-object-source.ts) and hears each committed change.
 */
import type { Database, Statement } from "bun:sqlite";
import type { RevisionCounter } from "./revisions.ts";

/** The resources this table holds, as the API names them. */
export const OBJECT_RESOURCES = ["configmaps", "secrets", "serviceaccounts"] as const;
export type ObjectResource = (typeof OBJECT_RESOURCES)[number];

/** An object's row, as the API draws the object from it. */
export interface StoredObject {
  resource: ObjectResource;
  namespace: string;
  name: string;
  uid: string;
  /** The object as stored: its metadata has no resourceVersion (the row's revision is it). */
  object: Record<string, unknown>;
  /** The object is gone: the row stays for the watches (DELETED) until a create revives the name. */
  deleted: boolean;
  revision: number;
  createdRevision: number;
}

export interface ObjectKey {
  resource: ObjectResource;
  namespace: string;
  name: string;
}

/** A write the API server would refuse; `message` is its own wording. */
export class ObjectWriteError extends Error {
  override readonly name = "ObjectWriteError";
  constructor(
    readonly reason: "AlreadyExists" | "NotFound" | "Conflict",
    readonly key: ObjectKey,
    message: string,
  ) {
    super(message);
  }
}

export type ObjectChangeListener = (key: ObjectKey) => void;

/** The columns every read takes, for object-reads.ts too. */
export const OBJECT_COLUMNS = "resource, namespace, name, uid, object_json, deleted, revision, created_revision";

interface ObjectRow {
  resource: ObjectResource;
  namespace: string;
  name: string;
  uid: string;
  object_json: string;
  deleted: number;
  revision: number;
  created_revision: number;
}

/** A row as read. */
export function objectRow(row: unknown): StoredObject {
  const r = row as ObjectRow;
  return {
    resource: r.resource,
    namespace: r.namespace,
    name: r.name,
    uid: r.uid,
    object: JSON.parse(r.object_json) as Record<string, unknown>,
    deleted: r.deleted === 1,
    revision: r.revision,
    createdRevision: r.created_revision,
  };
}

export class SqliteObjectStore {
  private readonly sql: Record<"byKey" | "insert" | "update" | "markDeleted" | "liveIn", Statement>;
  private readonly listeners = new Set<ObjectChangeListener>();

  /** `revisions` is the agent's SqliteStore's counter: one counter per database. */
  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionCounter,
  ) {
    this.sql = {
      byKey: db.prepare(`SELECT ${OBJECT_COLUMNS} FROM api_objects WHERE resource = ? AND namespace = ? AND name = ?`),
      insert: db.prepare(`
        INSERT INTO api_objects (${OBJECT_COLUMNS}) VALUES ($resource, $namespace, $name, $uid, $object_json, 0, $revision, $revision)
        ON CONFLICT (resource, namespace, name) DO UPDATE SET uid = excluded.uid, object_json = excluded.object_json, deleted = 0,
          revision = excluded.revision, created_revision = excluded.created_revision`),
      update: db.prepare("UPDATE api_objects SET object_json = ?, revision = ? WHERE resource = ? AND namespace = ? AND name = ?"),
      markDeleted: db.prepare("UPDATE api_objects SET deleted = 1, revision = ? WHERE resource = ? AND namespace = ? AND name = ?"),
      liveIn: db.prepare("SELECT resource, name FROM api_objects WHERE namespace = ? AND deleted = 0"),
    };
  }

  /** The live object, if any. */
  get(key: ObjectKey): StoredObject | undefined {
    const row = this.sql.byKey.get(key.resource, key.namespace, key.name);
    const stored = row ? objectRow(row) : undefined;
    return stored && !stored.deleted ? stored : undefined;
  }

  /** Stores a new object; AlreadyExists while a live one holds the name. */
  create(key: ObjectKey, uid: string, object: Record<string, unknown>): StoredObject {
    const stored = this.revisions.transact(this.db, () => {
      if (this.get(key)) throw new ObjectWriteError("AlreadyExists", key, `${key.resource} ${JSON.stringify(key.name)} already exists`);
      this.sql.insert.run({ resource: key.resource, namespace: key.namespace, name: key.name, uid, object_json: JSON.stringify(object), revision: this.revisions.next() });
      return this.read(key);
    });
    this.tell(key);
    return stored;
  }

  /** Stores the object unless a live one holds the name (a controller's object, such as a namespace's default ServiceAccount); returns whether it did. */
  createIfAbsent(key: ObjectKey, uid: string, object: Record<string, unknown>): boolean {
    if (this.get(key)) return false;
    this.create(key, uid, object);
    return true;
  }

  /**
   * Replaces a live object's stored form if it is still at revision `expected` (undefined: whatever
   * its revision); NotFound or Conflict otherwise, in the API server's words.
   */
  update(key: ObjectKey, expected: number | undefined, object: Record<string, unknown>): StoredObject {
    const stored = this.revisions.transact(this.db, () => {
      const current = this.live(key);
      if (expected !== undefined && current.revision !== expected) {
        throw new ObjectWriteError("Conflict", key, `Operation cannot be fulfilled on ${key.resource} ${JSON.stringify(key.name)}: the object has been modified; please apply your changes to the latest version and try again`);
      }
      this.sql.update.run(JSON.stringify(object), this.revisions.next(), key.resource, key.namespace, key.name);
      return this.read(key);
    });
    this.tell(key);
    return stored;
  }

  /** Deletes a live object (NotFound otherwise); `uid`, when given, must be its uid (a precondition: Conflict). Returns it as it was. */
  delete(key: ObjectKey, uid?: string): StoredObject {
    const stored = this.revisions.transact(this.db, () => {
      const current = this.live(key);
      if (uid !== undefined && uid !== current.uid) {
        throw new ObjectWriteError("Conflict", key, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.uid}`);
      }
      this.sql.markDeleted.run(this.revisions.next(), key.resource, key.namespace, key.name);
      return current;
    });
    this.tell(key);
    return stored;
  }

  /** Deletes every live object of a namespace (its delete, in the caller's transaction). */
  deleteNamespace(namespace: string): void {
    const keys = (this.sql.liveIn.all(namespace) as { resource: ObjectResource; name: string }[]).map((row) => ({ ...row, namespace }));
    this.revisions.transact(this.db, () => {
      for (const key of keys) this.sql.markDeleted.run(this.revisions.next(), key.resource, key.namespace, key.name);
    });
    for (const key of keys) this.tell(key);
  }

  /** Told each object written or deleted, once its write returned (committed, unless the caller's own transaction rolls back). */
  onChange(listener: ObjectChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private live(key: ObjectKey): StoredObject {
    const current = this.get(key);
    if (!current) throw new ObjectWriteError("NotFound", key, `${key.resource} ${JSON.stringify(key.name)} not found`);
    return current;
  }

  private read(key: ObjectKey): StoredObject {
    return objectRow(this.sql.byKey.get(key.resource, key.namespace, key.name));
  }

  private tell(key: ObjectKey): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(key);
      } catch {
        // A listener's failure is its own; the write is committed either way.
      }
    }
  }
}
