/**
 * The rows the commands and the API read, as the store's tables hold them, and their mapping from
 * SQLite rows: one shape for each, shared by every read (queries.ts, event-reads.ts, the watches).
 */
import type { Issue } from "../manifest/errors.ts";
import type { EventFacts } from "../v1/event-object.ts";
import type { V1Pod } from "../v1/v1.ts";

export interface PodRow {
  uid: string;
  namespace: string;
  name: string;
  deletedAt: number | null;
  revision: number;
  /** The revision that inserted the row (or revived the uid); 0 before migrations/0004. */
  createdRevision: number;
  object: V1Pod;
}

/** A manifest file the agent refused, shown as a pod with STATUS Invalid (migrations/0002). */
export interface RefusedPodRow {
  uid: string;
  file: string;
  namespace: string;
  name: string;
  reason: string;
  issues: Issue[];
  revision: number;
  object: V1Pod;
}

/** An events row: what a v1 Event is drawn from (v1/event-object.ts), and when it was inserted. */
export interface EventRow extends EventFacts {
  type: "Normal" | "Warning";
  /** The revision that inserted the row; 0 before migrations/0004. */
  createdRevision: number;
}

export interface AttemptRow {
  podUid: string;
  container: string;
  attempt: number;
  runtimeId: string;
  startedAt: number | null;
  finishedAt: number | null;
  exitCode: number | null;
  reason: string | null;
  signal: number | null;
  logPath: string | null;
  /** Why it was killed (oom, liveness, startup, removed, replaced, shutdown, completed, changed); null when it ended on its own. */
  killCause?: string | null;
  /** The agent sent SIGKILL when the grace period ran out. */
  graceExpired?: boolean;
}

export interface EventFilter {
  /** Only events of pods with this name (any namespace unless `namespace` is set). */
  pod?: string;
  namespace?: string;
  /** Only these types; empty or absent means all. */
  types?: string[];
  /** Only rows written after this revision (for `-w`). */
  afterRevision?: number;
}

export const POD_COLUMNS = "uid, namespace, name, deleted_at, revision, created_revision, object_json";
export const EVENT_COLUMNS = "id, pod_uid, namespace, pod, container, type, reason, message, count, first_at, last_at, revision, created_revision";

type Row = Record<string, unknown>;

export function podRow(value: unknown): PodRow {
  const row = value as Row;
  return {
    uid: row.uid as string,
    namespace: row.namespace as string,
    name: row.name as string,
    deletedAt: row.deleted_at as number | null,
    revision: row.revision as number,
    createdRevision: row.created_revision as number,
    object: JSON.parse(row.object_json as string) as V1Pod,
  };
}

export function refusedRow(value: unknown): RefusedPodRow {
  const row = value as Row;
  return {
    uid: row.uid as string,
    file: row.file as string,
    namespace: row.namespace as string,
    name: row.name as string,
    reason: row.reason as string,
    issues: JSON.parse(row.issues_json as string) as Issue[],
    revision: row.revision as number,
    object: JSON.parse(row.object_json as string) as V1Pod,
  };
}

export function eventRow(value: unknown): EventRow {
  const row = value as Row;
  return {
    id: row.id as number,
    podUid: row.pod_uid as string,
    namespace: row.namespace as string,
    pod: row.pod as string,
    container: row.container as string,
    type: row.type as EventRow["type"],
    reason: row.reason as string,
    message: row.message as string,
    count: row.count as number,
    firstAt: row.first_at as number,
    lastAt: row.last_at as number,
    revision: row.revision as number,
    createdRevision: row.created_revision as number,
  };
}

export function attemptRow(value: unknown): AttemptRow {
  const row = value as Row;
  return {
    podUid: row.pod_uid as string,
    container: row.container as string,
    attempt: row.attempt as number,
    runtimeId: row.runtime_id as string,
    startedAt: row.started_at as number | null,
    finishedAt: row.finished_at as number | null,
    exitCode: row.exit_code as number | null,
    reason: row.reason as string | null,
    signal: row.signal as number | null,
    logPath: row.log_path as string | null,
    killCause: (row.kill_cause as string | null | undefined) ?? null,
    graceExpired: row.grace_expired === 1,
  };
}

/** The WHERE clause (empty, or starting with WHERE) and its parameters for `filter`. */
export function eventFilterSql(filter: EventFilter): { clause: string; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.pod !== undefined) (where.push("pod = ?"), params.push(filter.pod));
  if (filter.namespace !== undefined) (where.push("namespace = ?"), params.push(filter.namespace));
  if (filter.types && filter.types.length > 0) {
    where.push(`type IN (${filter.types.map(() => "?").join(", ")})`);
    params.push(...filter.types);
  }
  if (filter.afterRevision !== undefined) (where.push("revision > ?"), params.push(filter.afterRevision));
  return { clause: where.length > 0 ? `WHERE ${where.join(" AND ")}` : "", params };
}
