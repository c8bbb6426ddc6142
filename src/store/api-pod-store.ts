/**
 * The pods created through the API (migrations/0005_api_pods.sql): the second pod source, kept in
 * the database so an acknowledged create survives `kill -9`. Every write is one transaction on the
 * agent's connection and takes its resourceVersion from the shared RevisionCounter, so the commit
 * reaches open watches like any other; a write returns only after its commit.
 */
import type { Database, Statement } from "bun:sqlite";
import { SqliteNamespaceStore, type NamespaceStore } from "./namespace-store.ts";
import { RevisionCounter } from "./revisions.ts";

/** A pod created through the API, as stored. */
export interface StoredApiPod {
  uid: string;
  namespace: string;
  name: string;
  /**
   * The v1 Pod as accepted: what was submitted, with metadata.name (a generateName resolved),
   * namespace, uid and creationTimestamp set. No resourceVersion, no status, no deletion fields:
   * those are the row's own columns.
   */
  object: Record<string, unknown>;
  /** The revision of the row's last write. */
  resourceVersion: number;
  /** metadata.creationTimestamp, epoch ms. */
  createdAt: number;
  /** Set once a delete was accepted: the pod is Terminating with this grace. */
  deletion?: ApiPodDeletion;
}

export interface ApiPodDeletion {
  requestedAt: number;
  gracePeriodSeconds: number;
}

export interface NewApiPod {
  uid: string;
  namespace: string;
  name: string;
  object: Record<string, unknown>;
  createdAt: number;
  /** The Pod as served once this write commits (drawn by the writer, saved as given); see migrations/0009. */
  served?: Record<string, unknown>;
}

/** Draws the Pod a delete serves, from the deletion it ends with (a second delete may keep the first's). */
export type DrawDeleted = (deletion: ApiPodDeletion) => Record<string, unknown>;

/** The API server's preconditions on a delete (DeleteOptions.preconditions). */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/**
 * What the API's write handlers need of the store. Each method is one transaction; each throws
 * ApiPodWriteError (NotFound, AlreadyExists, Conflict) with the API server's message, and any other
 * error for a failed write (nothing was written then).
 */
export interface ApiPodStore {
  /** Stores a new pod. AlreadyExists when its namespace already has an API pod of that name. */
  create(pod: NewApiPod): StoredApiPod;
  get(namespace: string, name: string): StoredApiPod | undefined;
  /** Every API pod (Terminating ones included), by namespace then name. */
  list(): StoredApiPod[];
  /**
   * The resourceVersion a client sees for the pod: the newest of the row's and its checkpointed
   * status's (the loop's `pods` row), since a GET serves the latter.
   */
  resourceVersion(namespace: string, name: string): number | undefined;
  /**
   * Replaces the stored object. With `expectedResourceVersion`, a pod changed since (see
   * resourceVersion) is a Conflict, as the API server answers a stale update. NotFound when absent.
   */
  update(namespace: string, name: string, expectedResourceVersion: number | undefined, object: Record<string, unknown>, served?: Record<string, unknown>): StoredApiPod;
  /**
   * Marks the pod Terminating with `gracePeriodSeconds` (a second delete may only shorten it).
   * Preconditions that do not hold are a Conflict; an absent pod is NotFound.
   */
  markDeleting(namespace: string, name: string, deletion: ApiPodDeletion, preconditions?: DeletePreconditions, draw?: DrawDeleted): StoredApiPod;
  /**
   * Removes the row of that incarnation (`uid`) once its pod is gone; false when it was not there.
   * The last API pod of a Terminating namespace takes the namespace with it, in the same transaction.
   */
  remove(namespace: string, name: string, uid: string): boolean;
}

export type ApiPodWriteReason = "NotFound" | "AlreadyExists" | "Conflict";

/** A write the API server would refuse; `message` is the API server's own wording. */
export class ApiPodWriteError extends Error {
  override readonly name = "ApiPodWriteError";
  constructor(
    readonly reason: ApiPodWriteReason,
    message: string,
    readonly pod: { namespace: string; name: string },
  ) {
    super(message);
  }
}

interface ApiPodRow {
  uid: string;
  namespace: string;
  name: string;
  object_json: string;
  resource_version: number;
  created_at: number;
  deletion_requested_at: number | null;
  deletion_grace_seconds: number | null;
}

const COLUMNS = "uid, namespace, name, object_json, resource_version, created_at, deletion_requested_at, deletion_grace_seconds";

export class SqliteApiPodStore implements ApiPodStore {
  private readonly sql: Record<"byName" | "all" | "insert" | "update" | "markDeleting" | "remove" | "statusRevision", Statement>;

  /** `revisions` is the agent's SqliteStore's counter: one counter per database; `namespaces` the store of the same connection. */
  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionCounter,
    private readonly namespaces: Pick<NamespaceStore, "finishIfEmpty"> = new SqliteNamespaceStore(db, revisions),
  ) {
    this.sql = {
      byName: db.prepare(`SELECT ${COLUMNS} FROM api_pods WHERE namespace = ? AND name = ?`),
      all: db.prepare(`SELECT ${COLUMNS} FROM api_pods ORDER BY namespace, name`),
      insert: db.prepare(`INSERT INTO api_pods (${COLUMNS}, served_json) VALUES ($uid, $namespace, $name, $object_json, $resource_version, $created_at, NULL, NULL, $served_json)`),
      update: db.prepare("UPDATE api_pods SET object_json = ?, resource_version = ?, served_json = ? WHERE uid = ?"),
      markDeleting: db.prepare("UPDATE api_pods SET deletion_requested_at = ?, deletion_grace_seconds = ?, resource_version = ?, served_json = ? WHERE uid = ?"),
      remove: db.prepare("DELETE FROM api_pods WHERE namespace = ? AND name = ? AND uid = ?"),
      statusRevision: db.prepare("SELECT revision FROM pods WHERE uid = ? AND deleted_at IS NULL"),
    };
  }

  create(pod: NewApiPod): StoredApiPod {
    return this.revisions.transact(this.db, () => {
      if (this.sql.byName.get(pod.namespace, pod.name)) {
        throw new ApiPodWriteError("AlreadyExists", `pods "${pod.name}" already exists`, pod);
      }
      const resourceVersion = this.revisions.next();
      this.sql.insert.run({
        uid: pod.uid,
        namespace: pod.namespace,
        name: pod.name,
        object_json: JSON.stringify(pod.object),
        resource_version: resourceVersion,
        created_at: pod.createdAt,
        served_json: pod.served === undefined ? null : JSON.stringify(pod.served),
      });
      const { served: _served, ...stored } = pod;
      return { ...stored, resourceVersion };
    });
  }

  get(namespace: string, name: string): StoredApiPod | undefined {
    const row = this.sql.byName.get(namespace, name) as ApiPodRow | null;
    return row ? storedPod(row) : undefined;
  }

  list(): StoredApiPod[] {
    return (this.sql.all.all() as ApiPodRow[]).map(storedPod);
  }

  resourceVersion(namespace: string, name: string): number | undefined {
    const row = this.sql.byName.get(namespace, name) as ApiPodRow | null;
    return row ? this.currentVersion(row) : undefined;
  }

  update(namespace: string, name: string, expectedResourceVersion: number | undefined, object: Record<string, unknown>, served?: Record<string, unknown>): StoredApiPod {
    return this.revisions.transact(this.db, () => {
      const row = this.existing(namespace, name);
      if (expectedResourceVersion !== undefined && expectedResourceVersion !== this.currentVersion(row)) {
        throw new ApiPodWriteError(
          "Conflict",
          `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          { namespace, name },
        );
      }
      const resourceVersion = this.revisions.next();
      this.sql.update.run(JSON.stringify(object), resourceVersion, served === undefined ? null : JSON.stringify(served), row.uid);
      return { ...storedPod(row), object, resourceVersion };
    });
  }

  markDeleting(namespace: string, name: string, deletion: ApiPodDeletion, preconditions: DeletePreconditions = {}, draw?: DrawDeleted): StoredApiPod {
    return this.revisions.transact(this.db, () => {
      const row = this.existing(namespace, name);
      const current = String(this.currentVersion(row));
      if (preconditions.uid !== undefined && preconditions.uid !== row.uid) {
        throw new ApiPodWriteError("Conflict", `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${row.uid}`, { namespace, name });
      }
      if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== current) {
        throw new ApiPodWriteError("Conflict", `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${current}`, { namespace, name });
      }
      const stored = storedPod(row);
      // As the API server: a pod already Terminating keeps its deletion unless the new grace is shorter.
      if (stored.deletion && stored.deletion.gracePeriodSeconds <= deletion.gracePeriodSeconds) return stored;
      const next = stored.deletion ? { requestedAt: stored.deletion.requestedAt, gracePeriodSeconds: deletion.gracePeriodSeconds } : deletion;
      const resourceVersion = this.revisions.next();
      this.sql.markDeleting.run(next.requestedAt, next.gracePeriodSeconds, resourceVersion, draw ? JSON.stringify(draw(next)) : null, row.uid);
      return { ...stored, deletion: next, resourceVersion };
    });
  }

  remove(namespace: string, name: string, uid: string): boolean {
    return this.revisions.transact(this.db, () => {
      if (this.sql.remove.run(namespace, name, uid).changes === 0) return false;
      this.namespaces.finishIfEmpty(namespace);
      return true;
    });
  }

  private existing(namespace: string, name: string): ApiPodRow {
    const row = this.sql.byName.get(namespace, name) as ApiPodRow | null;
    if (!row) throw new ApiPodWriteError("NotFound", `pods "${name}" not found`, { namespace, name });
    return row;
  }

  private currentVersion(row: ApiPodRow): number {
    const status = this.sql.statusRevision.get(row.uid) as { revision: number } | null;
    return Math.max(row.resource_version, status?.revision ?? 0);
  }
}

function storedPod(row: ApiPodRow): StoredApiPod {
  return {
    uid: row.uid,
    namespace: row.namespace,
    name: row.name,
    object: JSON.parse(row.object_json) as Record<string, unknown>,
    resourceVersion: row.resource_version,
    createdAt: row.created_at,
    ...(row.deletion_requested_at !== null && { deletion: { requestedAt: row.deletion_requested_at, gracePeriodSeconds: row.deletion_grace_seconds ?? 0 } }),
  };
}
