/**
 * The namespaces created through the API (migrations/0010_namespaces.sql), on the agent's write
 * connection: each write is one transaction and takes its revision from the shared RevisionCounter,
 * so its commit reaches open watches like a pod's. A delete marks the namespace Terminating and,
 * in the same transaction, deletes what it holds; the namespace is gone once no API pod is left in
 * it, which the removal of its last pod's row decides (finishIfEmpty), as the API server's
 * namespace controller drops its finalizer once the content is gone.
 */
import type { Database, Statement } from "bun:sqlite";
import type { RevisionCounter } from "./revisions.ts";

/** A namespace row, as the API draws its Namespace from it. */
export interface StoredNamespace {
  name: string;
  uid: string;
  /** metadata.labels, metadata.annotations and spec as accepted; name, uid, times and status are the row's own. */
  object: Record<string, unknown>;
  /** metadata.creationTimestamp, epoch ms. */
  createdAt: number;
  /** metadata.deletionTimestamp, epoch ms: the namespace is Terminating. */
  deletionRequestedAt?: number;
  /** The namespace is gone: the row stays for the watches (DELETED) until a create revives the name. */
  deleted: boolean;
  revision: number;
  createdRevision: number;
}

export interface NewNamespace {
  name: string;
  uid: string;
  object: Record<string, unknown>;
  createdAt: number;
}

/** A write the API server would refuse; `message` is its own wording. */
export class NamespaceWriteError extends Error {
  override readonly name = "NamespaceWriteError";
  constructor(
    readonly reason: "AlreadyExists" | "NotFound",
    readonly namespace: string,
  ) {
    super(reason === "AlreadyExists" ? `namespaces "${namespace}" already exists` : `namespaces "${namespace}" not found`);
  }
}

/** What the API's namespace writes need of the store; each method is one transaction (or a savepoint of the caller's). */
export interface NamespaceStore {
  /** Stores a new namespace, reviving a gone one's row. AlreadyExists while a row that is not gone holds the name. */
  create(namespace: NewNamespace): StoredNamespace;
  /** The row that is not gone, if any. */
  get(name: string): StoredNamespace | undefined;
  /**
   * Marks the namespace Terminating at `requestedAt` (a second delete keeps the first's time),
   * storing `identity` for a namespace that had no row (one that exists because it holds pods),
   * runs `content` (the deletion of its API pods) in the same transaction, then finishes it at
   * once if no API pod is left in it. Returns the namespace as deleted: Terminating, and `deleted`
   * when it is already gone.
   */
  markDeleting(identity: NewNamespace, requestedAt: number, content: () => void): StoredNamespace;
  /** Marks a Terminating namespace gone when no API pod is left in it; true when it did. */
  finishIfEmpty(name: string): boolean;
}

interface NamespaceRow {
  name: string;
  uid: string;
  object_json: string;
  created_at: number;
  deletion_requested_at: number | null;
  deleted: number;
  revision: number;
  created_revision: number;
}

/** The columns every read takes, for namespace-reads.ts too. */
export const NAMESPACE_COLUMNS = "name, uid, object_json, created_at, deletion_requested_at, deleted, revision, created_revision";

/** A row as read. */
export function namespaceRow(row: unknown): StoredNamespace {
  const r = row as NamespaceRow;
  return {
    name: r.name,
    uid: r.uid,
    object: JSON.parse(r.object_json) as Record<string, unknown>,
    createdAt: r.created_at,
    ...(r.deletion_requested_at !== null && { deletionRequestedAt: r.deletion_requested_at }),
    deleted: r.deleted === 1,
    revision: r.revision,
    createdRevision: r.created_revision,
  };
}

export class SqliteNamespaceStore implements NamespaceStore {
  private readonly sql: Record<"byName" | "upsert" | "markDeleting" | "finish" | "apiPodIn", Statement>;

  /** `revisions` is the agent's SqliteStore's counter: one counter per database. */
  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionCounter,
  ) {
    this.sql = {
      byName: db.prepare(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE name = ?`),
      upsert: db.prepare(`
        INSERT INTO namespaces (${NAMESPACE_COLUMNS}) VALUES ($name, $uid, $object_json, $created_at, $deletion_requested_at, 0, $revision, $revision)
        ON CONFLICT (name) DO UPDATE SET uid = excluded.uid, object_json = excluded.object_json, created_at = excluded.created_at,
          deletion_requested_at = excluded.deletion_requested_at, deleted = 0, revision = excluded.revision, created_revision = excluded.created_revision`),
      markDeleting: db.prepare("UPDATE namespaces SET deletion_requested_at = ?, revision = ? WHERE name = ?"),
      finish: db.prepare("UPDATE namespaces SET deleted = 1, revision = ? WHERE name = ?"),
      apiPodIn: db.prepare("SELECT 1 FROM api_pods WHERE namespace = ? LIMIT 1"),
    };
  }

  create(namespace: NewNamespace): StoredNamespace {
    return this.revisions.transact(this.db, () => {
      if (this.get(namespace.name)) throw new NamespaceWriteError("AlreadyExists", namespace.name);
      return this.insert(namespace, null);
    });
  }

  get(name: string): StoredNamespace | undefined {
    const row = this.sql.byName.get(name);
    const stored = row ? namespaceRow(row) : undefined;
    return stored && !stored.deleted ? stored : undefined;
  }

  markDeleting(identity: NewNamespace, requestedAt: number, content: () => void): StoredNamespace {
    return this.revisions.transact(this.db, () => {
      const existing = this.get(identity.name);
      if (!existing) this.insert(identity, requestedAt);
      else if (existing.deletionRequestedAt === undefined) this.sql.markDeleting.run(requestedAt, this.revisions.next(), identity.name);
      content();
      this.finishIfEmpty(identity.name);
      return namespaceRow(this.sql.byName.get(identity.name));
    });
  }

  finishIfEmpty(name: string): boolean {
    return this.revisions.transact(this.db, () => {
      const row = this.get(name);
      if (!row || row.deletionRequestedAt === undefined || this.sql.apiPodIn.get(name)) return false;
      this.sql.finish.run(this.revisions.next(), name);
      return true;
    });
  }

  private insert(namespace: NewNamespace, deletionRequestedAt: number | null): StoredNamespace {
    const revision = this.revisions.next();
    this.sql.upsert.run({
      name: namespace.name,
      uid: namespace.uid,
      object_json: JSON.stringify(namespace.object),
      created_at: namespace.createdAt,
      deletion_requested_at: deletionRequestedAt,
      revision,
    });
    return namespaceRow(this.sql.byName.get(namespace.name));
  }
}
