/**
 * The queries `triage` hands the user as next steps: they show the same attempts and events the
 * report used, read through `minikubelet sql`. Kept here because SQL lives in src/store/; times are
 * rendered as UTC timestamps, since the columns hold epoch milliseconds.
 */
import { backoffKey } from "../kubelet/backoff.ts";

/** A SQL string literal: quotes doubled, as SQLite reads them. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function utc(column: string): string {
  return `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch') AS ${column}`;
}

/** Every start of the container: when, how it ended. */
export function attemptsQuery(podUid: string, container: string): string {
  return `SELECT attempt, ${utc("started_at")}, ${utc("finished_at")}, exit_code, reason, signal FROM attempts WHERE pod_uid = ${literal(podUid)} AND container = ${literal(container)} ORDER BY attempt`;
}

/** The container's events and the pod's own, in the order they last happened. */
export function eventsQuery(podUid: string, container: string): string {
  return `SELECT type, reason, count, ${utc("first_at")}, ${utc("last_at")}, message FROM events WHERE pod_uid = ${literal(podUid)} AND container IN (${literal(container)}, '') ORDER BY last_at, id`;
}

/** The container's restart back-off as the agent last checkpointed it. */
export function backoffQuery(podUid: string, container: string): string {
  return `SELECT delay_ms, ${utc("updated_at")} FROM backoff WHERE key = ${literal(backoffKey(podUid, container))}`;
}
