/**
 * The pods and events collections as watches serve them: the current objects (for RV 0), the rows
 * changed after a revision, and each as the list serves it (pods-api.ts, events-api.ts: the same
 * objects, field selectors and Table rows), so a watch line and a list item for one object are the
 * same. The collections' routes hand a request without `watch` to the list.
 */
import type { EventRow } from "../../store/queries.ts";
import { apiEvent, type V1Event } from "../../v1/event-object.ts";
import { EVENT_COLUMNS, eventCells, eventSelector, listEvents } from "./events-api.ts";
import { apiPod, listPods, POD_COLUMNS, podSelector, podTableRows } from "./pods/pods-api.ts";
import type { Route } from "../http/http.ts";
import { includeObject, rowObject } from "../http/table.ts";
import type { WatchChange, WatchKind, WatchObject } from "../watch/watch-kind.ts";
import { watchOrList } from "../watch/watch.ts";

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

export const watchRoutes: Route[] = [
  { method: "GET", path: "/api/v1/pods", handle: (request, api) => watchOrList(request, api, podKind, listPods) },
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods", handle: (request, api) => watchOrList(request, api, podKind, listPods) },
  { method: "GET", path: "/api/v1/events", handle: (request, api) => watchOrList(request, api, eventKind, listEvents) },
  { method: "GET", path: "/api/v1/namespaces/:namespace/events", handle: (request, api) => watchOrList(request, api, eventKind, listEvents) },
];
