/**
 * Event reads that stay bounded however many events the database holds: the list streamed row by
 * row off an index (never held whole), bounds of its table cells from index seeks alone, and a
 * pod's newest events with their total.
 */
import type { Database } from "bun:sqlite";
import { EVENT_COLUMNS, eventFilterSql, eventRow, type EventFilter, type EventRow } from "./rows.ts";

/**
 * The events `filter` selects, oldest last occurrence first (kubectl's order), read from SQLite as
 * the caller iterates: events_by_time (or events_by_name for a pod) gives the order, so the first
 * row comes before the last is read and memory does not grow with the list.
 */
export function streamEvents(db: Database, filter: EventFilter = {}): IterableIterator<EventRow> {
  const { clause, params } = eventFilterSql({ ...filter, afterRevision: undefined });
  const statement = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events ${clause} ORDER BY last_at, id`);
  const rows = statement.iterate(...params);
  // A plain iterator rather than a generator: at a million rows, a generator's resumes cost more than SQLite's steps.
  const iterator: IterableIterator<EventRow> = {
    next: () => {
      const row = rows.next();
      if (!row.done) return { done: false, value: eventRow(row.value) };
      statement.finalize();
      return { done: true, value: undefined };
    },
    return: (value?: unknown) => {
      statement.finalize();
      return { done: true, value };
    },
    [Symbol.iterator]: () => iterator,
  };
  return iterator;
}

/** Upper bounds of what an event table's cells can hold, without reading the events themselves. */
export interface EventCellBounds {
  /** The longest type, reason and pod name (in characters) any event has. */
  typeLength: number;
  reasonLength: number;
  podLength: number;
  /** No event's count is higher: each write of an event (its insert or a repeat) takes a new revision. */
  maxCount: number;
  /** The oldest and newest last occurrence, epoch ms (undefined without events). */
  oldestLastAt: number | undefined;
  newestLastAt: number | undefined;
}

/**
 * Bounds over every event (a filter only narrows what they bound), from index seeks alone: a skip
 * scan of events_identity (pod_uid, container, type, reason, message) visits each distinct
 * (pod, container, type, reason) once instead of every row (a uid names one pod), and the count and time bounds are one
 * seek of an index each.
 */
export function eventCellBounds(db: Database): EventCellBounds {
  type Key = { pod_uid: string; container: string; type: string; reason: string; pod: string };
  const columns = "pod_uid, container, type, reason, pod";
  const order = "ORDER BY pod_uid, container, type, reason, message LIMIT 1";
  // A blob sorts after every text, so (key, x'') seeks past all of a key's messages at once; SQLite
  // plans this seek only with the key as parameters, hence a loop here rather than a recursive CTE.
  const next = db.prepare(`SELECT ${columns} FROM events WHERE (pod_uid, container, type, reason, message) > (?, ?, ?, ?, x'') ${order}`);
  const bounds = { typeLength: 0, reasonLength: 0, podLength: 0 };
  try {
    for (let key = db.prepare(`SELECT ${columns} FROM events ${order}`).get() as Key | null; key; key = next.get(key.pod_uid, key.container, key.type, key.reason) as Key | null) {
      bounds.typeLength = Math.max(bounds.typeLength, characters(key.type));
      bounds.reasonLength = Math.max(bounds.reasonLength, characters(key.reason));
      bounds.podLength = Math.max(bounds.podLength, characters(key.pod));
    }
  } finally {
    next.finalize();
  }
  const row = db
    .prepare("SELECT (SELECT max(revision) FROM events) AS max_revision, (SELECT min(last_at) FROM events) AS oldest, (SELECT max(last_at) FROM events) AS newest")
    .get() as { max_revision: number | null; oldest: number | null; newest: number | null };
  return { ...bounds, maxCount: Math.max(1, row.max_revision ?? 1), oldestLastAt: row.oldest ?? undefined, newestLastAt: row.newest ?? undefined };
}

/** Characters as SQLite's length() and kubectl's tabwriter count them (code points, not UTF-16 units). */
function characters(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

/**
 * The pod's newest `limit` events, oldest first as describe lists them, and how many it has in all:
 * a bounded read of events_by_pod however many events the pod has.
 */
export function newestPodEvents(db: Database, podUid: string, limit: number): { events: EventRow[]; total: number } {
  const rows = db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE pod_uid = ? ORDER BY last_at DESC, id DESC LIMIT ?`).all(podUid, limit);
  const { total } = db.prepare("SELECT count(*) AS total FROM events WHERE pod_uid = ?").get(podUid) as { total: number };
  return { events: rows.map(eventRow).reverse(), total };
}
