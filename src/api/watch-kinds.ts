/**
 * What a watch serves, per resource: the current objects (for RV 0), the rows changed after a
 * revision, and each as the list serves it (pods-api.ts, events-api.ts: the same objects, field
 * selectors and Table rows), so a watch line and a list item for one object are the same.
 */
import type { EventRow, StoreReader } from "../store/queries.ts";
import { apiEvent, type V1Event } from "../status/event-object.ts";
import { EVENT_COLUMNS, eventCells, eventSelector } from "./events-api.ts";
import { apiPod, POD_COLUMNS, podSelector, podTableRows } from "./pods-api.ts";
import type { ApiRequest } from "./http.ts";
import { includeObject, rowObject, type TableColumn, type TableRow, type TableVersion } from "./table.ts";

export type WatchObject = Record<string, any> & { metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> } };

/** One row as a watch hands it on. */
export interface WatchChange {
  /** Identity across changes: the pod's uid, the event's id. */
  key: string;
  revision: number;
  /** The revision that inserted the row: newer than a watcher's cursor means ADDED. */
  createdRevision: number;
  deleted: boolean;
  /** The object's namespace; "" for a cluster-scoped object. */
  namespace: string;
  object: WatchObject;
  /**
   * The object itself did not change, only (perhaps) whether it exists: a watcher that holds it
   * and still sees it sends nothing (a namespace that exists because it holds pods, when a pod changes).
   */
  presenceOnly?: boolean;
}

/** Does an object match the request's `fieldSelector` and `labelSelector`. */
export type ObjectMatcher = (object: WatchObject) => boolean;

export interface WatchKind {
  /** `pods`: the resource, as the API names it. */
  resource: string;
  /** `Pod`: the kind a bookmark carries. */
  kind: string;
  /**
   * Whether a change can move an object into or out of a field selector (a pod's status.phase):
   * the watcher then remembers which objects the client holds, to send ADDED/DELETED for them.
   */
  mutableFields: boolean;
  /** The request's selectors; a malformed one is the list's 400. */
  matcher(request: ApiRequest): ObjectMatcher;
  /** The live objects, in list order. */
  current(store: StoreReader, namespace: string | undefined, nodeName: string): WatchChange[];
  /** Rows changed after `revision`, oldest first; at most about `limit` (read on from the last). */
  changedSince(store: StoreReader, revision: number, limit: number, nodeName: string): WatchChange[];
  columns: TableColumn[];
  row(object: WatchObject, now: number, request: ApiRequest, version: TableVersion): TableRow;
}

export const podKind: WatchKind = {
  resource: "pods",
  kind: "Pod",
  mutableFields: true,
  matcher: (request) => podSelector(request.query).matches as (object: WatchObject) => boolean,
  current: (store, namespace) => store.livePods(namespace === undefined ? {} : { namespace }).map(podChange),
  // Pods are few (retention drops deleted ones): one read takes every change. Refused manifest
  // files are not pods to the API (pods-api.ts), so not to its watch either.
  changedSince: (store, revision) => store.podsChangedSince(revision, { refused: false }).map(podChange),
  columns: POD_COLUMNS,
  row: (object, now, request, version) => podTableRows([object as never], now, request, version)[0]!,
};

function podChange(row: Parameters<typeof apiPod>[0]): WatchChange {
  return { key: row.uid, revision: row.revision, createdRevision: row.createdRevision, deleted: row.deletedAt !== null, namespace: row.namespace, object: apiPod(row) as WatchObject };
}

export const eventKind: WatchKind = {
  resource: "events",
  kind: "Event",
  mutableFields: false,
  matcher: (request) => eventSelector(request.query).matches as unknown as (object: WatchObject) => boolean,
  current: (store, namespace, nodeName) => store.events(namespace === undefined ? {} : { namespace }).map((row) => eventChange(row, nodeName)),
  changedSince: (store, revision, limit, nodeName) => store.eventsChangedSince(revision, limit).map((row) => eventChange(row, nodeName)),
  columns: EVENT_COLUMNS,
  row(object, now, request, version) {
    const event = object as unknown as V1Event;
    const row = rowObject(event, includeObject(request.query), version);
    return { cells: eventCells(event, now), ...(row && { object: row }) };
  },
};

function eventChange(row: EventRow, nodeName: string): WatchChange {
  return { key: String(row.id), revision: row.revision, createdRevision: row.createdRevision, deleted: false, namespace: row.namespace, object: apiEvent(row, nodeName) as unknown as WatchObject };
}
