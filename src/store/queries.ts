/**
 * The commands' read model over a read-only connection: pods, events, attempts. Every query is
 * served by an index of 0001_init.sql and bounded by what retention keeps.
 */
import type { Database, Statement } from "bun:sqlite";
import { backoffKey, type BackoffSettings } from "../kubelet/backoff.ts";
import type { PodRecord } from "../kubelet/pod-state.ts";
import { parseRecord } from "./pod-record-json.ts";
import { MAX_REVISION_SQL } from "./revisions.ts";
import { attemptRow, EVENT_COLUMNS, eventFilterSql, eventRow, POD_COLUMNS, podRow, refusedRow, type AttemptRow, type EventFilter, type EventRow, type PodRow, type RefusedPodRow } from "./rows.ts";

export { EVENT_COLUMNS, eventFilterSql, eventRow, type AttemptRow, type EventFilter, type EventRow, type PodRow, type RefusedPodRow } from "./rows.ts";

export class AmbiguousPodError extends Error {
  override readonly name = "AmbiguousPodError";
}

export class StoreReader {
  private readonly statements = new Map<string, Statement>();

  constructor(readonly db: Database) {}

  /**
   * Live pods, by namespace then name (the API server's order); optionally narrowed. Each is the
   * newest finished object written for it: the loop's checkpoint, or the one the API's last write
   * of the pod drew (migrations/0009) while the loop has not checkpointed since.
   */
  livePods(filter: { namespace?: string; name?: string } = {}): PodRow[] {
    const where = ["p.deleted_at IS NULL"];
    const params: string[] = [];
    if (filter.namespace !== undefined) (where.push("p.namespace = ?"), params.push(filter.namespace));
    if (filter.name !== undefined) (where.push("p.name = ?"), params.push(filter.name));
    const apiNewer = "a.served_json IS NOT NULL AND a.resource_version > p.revision";
    // A row an older agent wrote without its served object still raises the version a client sees
    // (and a precondition is checked against), as before.
    const sql = `SELECT p.uid, p.namespace, p.name, p.deleted_at,
        CASE WHEN ${apiNewer} THEN a.resource_version ELSE max(p.revision, coalesce(a.resource_version, 0)) END AS revision,
        p.created_revision, CASE WHEN ${apiNewer} THEN a.served_json ELSE p.object_json END AS object_json
      FROM pods p LEFT JOIN api_pods a ON a.uid = p.uid WHERE ${where.join(" AND ")} ORDER BY p.namespace, p.name`;
    const rows = this.query(sql).all(...params).map(podRow);
    const pending = this.pendingApiPods(filter);
    if (pending.length === 0) return rows;
    const order = (row: PodRow) => `${row.namespace}\u0000${row.name}`;
    return [...rows, ...pending].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  }

  /**
   * Pods created through the API that the loop has not checkpointed yet (it may be creating their
   * sandbox): served as their create drew them, Pending, as the API server serves a pod before its
   * kubelet has reported, so a create is never followed by a 404 (nor a delete by one).
   */
  private pendingApiPods(filter: { namespace?: string; name?: string }): PodRow[] {
    const where = ["NOT EXISTS (SELECT 1 FROM pods WHERE pods.uid = api_pods.uid)", "served_json IS NOT NULL"];
    const params: string[] = [];
    if (filter.namespace !== undefined) (where.push("namespace = ?"), params.push(filter.namespace));
    if (filter.name !== undefined) (where.push("name = ?"), params.push(filter.name));
    const sql = `SELECT uid, namespace, name, NULL AS deleted_at, resource_version AS revision, resource_version AS created_revision, served_json AS object_json FROM api_pods WHERE ${where.join(" AND ")}`;
    return this.query(sql).all(...params).map(podRow);
  }

  /** Refused manifest files as `get` lists them (STATUS Invalid), by namespace then name; optionally narrowed. */
  refusedPods(filter: { namespace?: string; name?: string } = {}): RefusedPodRow[] {
    const where = ["1 = 1"];
    const params: string[] = [];
    if (filter.namespace !== undefined) (where.push("namespace = ?"), params.push(filter.namespace));
    if (filter.name !== undefined) (where.push("name = ?"), params.push(filter.name));
    const sql = `SELECT uid, file, namespace, name, reason, issues_json, revision, object_json FROM invalid_manifests WHERE ${where.join(" AND ")} ORDER BY namespace, name, file`;
    return this.query(sql).all(...params).map(refusedRow);
  }

  /**
   * Pods (live or deleted) whose v1 object changed after `revision`, oldest change first; with the
   * refused manifest files `get -w` prints, unless `refused` is false (the API serves no such pods).
   */
  podsChangedSince(revision: number, options: { refused: boolean } = { refused: true }): PodRow[] {
    const pods = this.query(`SELECT ${POD_COLUMNS} FROM pods WHERE revision > ? ORDER BY revision`).all(revision).map(podRow);
    if (!options.refused) return pods;
    // A file turning bad is a row `get -w` prints (Invalid); the pod it becomes once fixed is another.
    const refused = this.query("SELECT uid, namespace, name, NULL AS deleted_at, revision, revision AS created_revision, object_json FROM invalid_manifests WHERE revision > ?").all(revision).map(podRow);
    return refused.length === 0 ? pods : [...pods, ...refused].sort((a, b) => a.revision - b.revision);
  }

  /**
   * The pod `name` for describe and logs: the live one, else the most recently deleted. Without a
   * namespace, a name found in several namespaces is an AmbiguousPodError.
   */
  findPod(name: string, namespace?: string): PodRow | undefined {
    const rows = (
      namespace === undefined
        ? this.query(`SELECT ${POD_COLUMNS} FROM pods WHERE name = ? ORDER BY deleted_at IS NOT NULL, deleted_at DESC`).all(name)
        : this.query(`SELECT ${POD_COLUMNS} FROM pods WHERE name = ? AND namespace = ? ORDER BY deleted_at IS NOT NULL, deleted_at DESC`).all(name, namespace)
    ).map(podRow);
    const namespaces = [...new Set(rows.map((row) => row.namespace))];
    if (namespaces.length > 1) {
      throw new AmbiguousPodError(`pod "${name}" exists in several namespaces (${namespaces.join(", ")}); choose one with -n`);
    }
    return rows[0];
  }

  /**
   * The namespaces holding a pod named `name`, for "web-lab exists in namespace demo". Deleted pods
   * count when the caller (describe, logs) would show one.
   */
  namespacesOfPod(name: string, options: { includeDeleted: boolean }): string[] {
    const live = options.includeDeleted ? "" : " AND deleted_at IS NULL";
    const rows = this.query(`SELECT DISTINCT namespace FROM pods WHERE name = ?${live} ORDER BY namespace`).all(name) as { namespace: string }[];
    return rows.map((row) => row.namespace);
  }

  /** How many live pods each namespace holds. */
  livePodCounts(): Map<string, number> {
    const rows = this.query("SELECT namespace, count(*) AS pods FROM pods WHERE deleted_at IS NULL GROUP BY namespace").all() as { namespace: string; pods: number }[];
    return new Map(rows.map((row) => [row.namespace, row.pods]));
  }

  /** The agent's record of the pod (validated spec, container records), as last checkpointed. */
  podRecord(uid: string): PodRecord | undefined {
    const row = this.query("SELECT record_json, object_json FROM pods WHERE uid = ?").get(uid) as { record_json: string; object_json: string } | null;
    return row ? parseRecord(row.record_json, row.object_json) : undefined;
  }

  /** The recorded restart back-off of one container (migrations/0001 `backoff`), if it has one. */
  backoffEntry(podUid: string, container: string): { delayMs: number; updatedAt: number } | undefined {
    const row = this.query("SELECT delay_ms, updated_at FROM backoff WHERE key = ?").get(backoffKey(podUid, container)) as { delay_ms: number; updated_at: number } | null;
    return row ? { delayMs: row.delay_ms, updatedAt: row.updated_at } : undefined;
  }

  /** The restart back-off the last agent ran with (migrations/0006), if an agent recorded one. */
  recordedBackoffSettings(): BackoffSettings | undefined {
    const row = this.query("SELECT base_ms, cap_ms FROM agent_backoff WHERE singleton = 1").get() as { base_ms: number; cap_ms: number } | null;
    return row ? { baseMs: row.base_ms, capMs: row.cap_ms } : undefined;
  }

  /** The pod's events, oldest last occurrence first (kubectl's order). */
  eventsForPod(podUid: string): EventRow[] {
    return this.query(`SELECT ${EVENT_COLUMNS} FROM events WHERE pod_uid = ? ORDER BY last_at, id`).all(podUid).map(eventRow);
  }

  events(filter: EventFilter = {}): EventRow[] {
    const { clause, params } = eventFilterSql(filter);
    const order = filter.afterRevision !== undefined ? "revision" : "last_at, id";
    return this.query(`SELECT ${EVENT_COLUMNS} FROM events ${clause} ORDER BY ${order}`).all(...params).map(eventRow);
  }

  /**
   * Events inserted or repeated after `revision`, oldest change first, at most `limit` of them (a
   * watch reads on from the last one's revision): one range scan of events_by_revision.
   */
  eventsChangedSince(revision: number, limit: number): EventRow[] {
    return this.query(`SELECT ${EVENT_COLUMNS} FROM events WHERE revision > ? ORDER BY revision LIMIT ?`).all(revision, limit).map(eventRow);
  }

  /** The highest revision retention deleted: a watch from an older one may have missed a change. */
  compactedRevision(): number {
    const row = this.query("SELECT revision FROM compaction").get() as { revision: number } | null;
    return row?.revision ?? 0;
  }

  /** Every start of every container of the pod, by container then attempt. */
  attempts(podUid: string, container?: string): AttemptRow[] {
    const rows =
      container === undefined
        ? this.query("SELECT * FROM attempts WHERE pod_uid = ? ORDER BY container, attempt").all(podUid)
        : this.query("SELECT * FROM attempts WHERE pod_uid = ? AND container = ? ORDER BY attempt").all(podUid, container);
    return rows.map(attemptRow);
  }

  /**
   * The container's newest `limit` attempts, oldest first, and how many starts it had in all: a
   * bounded read of the attempts' primary key however long the container has been crashing. The
   * total is the newest attempt's number + 1, since the table keeps only a container's newest 100.
   */
  latestAttempts(podUid: string, container: string, limit: number): { attempts: AttemptRow[]; total: number } {
    const rows = this.query("SELECT * FROM attempts WHERE pod_uid = ? AND container = ? ORDER BY attempt DESC LIMIT ?").all(podUid, container, limit);
    const { total } = this.query("SELECT coalesce(max(attempt) + 1, 0) AS total FROM attempts WHERE pod_uid = ? AND container = ?").get(podUid, container) as { total: number };
    return { attempts: rows.map(attemptRow).reverse(), total };
  }

  /** When the agent last checkpointed anything (epoch ms), or undefined for an empty database. */
  lastUpdateAt(): number | undefined {
    const row = this.query("SELECT max(updated_at) AS at FROM pods").get() as { at: number | null } | null;
    return row?.at ?? undefined;
  }

  /** The highest revision written so far (a pruned one included): `-w` and the API's lists start there. */
  revision(): number {
    const row = this.query(MAX_REVISION_SQL).get() as { revision: number | null } | null;
    return row?.revision ?? 0;
  }

  private query(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
