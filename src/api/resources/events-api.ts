/**
 * GET events: core/v1 Events from the events table, as EventList JSON or a Table, with the
 * `involvedObject.*`, `reason`, `type` and `source` field selectors that `kubectl describe pod`,
 * `kubectl events --for pod/X` and `get events --field-selector` send (in any order).
 */
import { timestampSince } from "../../printers/age.ts";
import { apiEvent, type V1Event } from "../../v1/event-object.ts";
import type { EventRow } from "../../store/queries.ts";
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { listRevision, page, pageRequest } from "../http/paging.ts";
import { exactField, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, type FieldSelector } from "../http/selectors.ts";
import { ApiError } from "../http/status.ts";
import { column, includeObject, jsonResponse, rowObject, tableResponse, tableVersion, type TableColumn } from "../http/table.ts";

/** The field labels the API server accepts for events (pkg/registry/core/event, ToSelectableFields). */
export const EVENT_FIELDS = [
  "metadata.name",
  "metadata.namespace",
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type",
] as const;

export const EVENT_COLUMNS: TableColumn[] = [
  column("Last Seen", "Time when this Event was last seen"),
  column("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
  column("Reason", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  column("Object", "The object that this event is about."),
  column("Subobject", "The subobject that this event is about.", { wide: true }),
  column("Source", "The component reporting this event. Should be a short machine understandable string.", { wide: true }),
  column("Message", "A human-readable description of the status of this operation."),
  column("First Seen", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", { wide: true }),
  column("Count", "The number of times this event has occurred.", { type: "integer", wide: true }),
  column("Name", "Name must be unique within a namespace.", { format: "name", wide: true }),
];
export function eventField(event: V1Event, field: string): string {
  const involved = event.involvedObject as Record<string, string | undefined>;
  if (field.startsWith("involvedObject.")) return involved[field.slice("involvedObject.".length)] ?? "";
  switch (field) {
    case "metadata.name":
      return event.metadata.name;
    case "metadata.namespace":
      return event.metadata.namespace;
    case "reason":
      return event.reason;
    case "type":
      return event.type;
    case "source":
      return event.source.component;
    case "reportingComponent":
      return event.reportingComponent;
    default:
      return "";
  }
}


/** printEvent's cells: ages, `pod/NAME`, the container's fieldPath, `kubelet, NODE`. */
export function eventCells(event: V1Event, now: number): (string | number)[] {
  const source = event.source.host ? `${event.source.component}, ${event.source.host}` : event.source.component;
  return [
    timestampSince(event.lastTimestamp, now),
    event.type,
    event.reason,
    `${event.involvedObject.kind.toLowerCase()}/${event.involvedObject.name}`,
    event.involvedObject.fieldPath ?? "",
    source,
    event.message.trim(),
    timestampSince(event.firstTimestamp, now),
    event.count,
    event.metadata.name,
  ];
}

function eventsResponse(events: V1Event[], request: ApiRequest, api: ApiContext, metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }, single = false): Response {
  const version = tableVersion(request.headers);
  if (!version) return jsonResponse(single ? events[0] : { kind: "EventList", apiVersion: "v1", metadata, items: events });
  const include = includeObject(request.query);
  const now = api.clock.now();
  const rows = events.map((event) => {
    const object = rowObject(event, include, version);
    return { cells: eventCells(event, now), ...(object && { object }) };
  });
  return tableResponse({ kind: "Table", apiVersion: version, metadata, columnDefinitions: EVENT_COLUMNS, rows });
}

/** The `labelSelector` and `fieldSelector` of an events request: the fields, and one event's match (the list's and the watch's). */
export function eventSelector(query: URLSearchParams): { fields: FieldSelector; matches: (event: V1Event) => boolean } {
  const labels = parseLabelSelector(query.get("labelSelector"));
  const fields = parseFieldSelector(query.get("fieldSelector"), EVENT_FIELDS);
  // Events carry no labels: only a selector every object meets (empty, or `!x` / `x!=y`) keeps them.
  return { fields, matches: (event) => matchesLabels(labels, {}) && matchesFields(fields, (field) => eventField(event, field)) };
}

/** The collection as a list; api-watch wraps it to serve `?watch=true` on the same path. */
export function listEvents(request: ApiRequest, api: ApiContext): Response {
  const { fields, matches } = eventSelector(request.query);
  const paging = pageRequest(request.query, api.limits);
  const namespace = request.params.namespace ?? exactField(fields, "metadata.namespace");
  const pod = exactField(fields, "involvedObject.name");
  const revision = listRevision(request.query, api.store.revision());
  const rows = api.store.events({ ...(namespace !== undefined && { namespace }), ...(pod !== undefined && { pod }) });
  const selected = rows.map((row) => ({ row, event: apiEvent(row, api.nodeName) })).filter(({ event }) => matches(event));
  // kubectl's order, oldest last occurrence first, is the store's; pages resume by that order's key.
  const served = page(selected, ({ row }) => resumeKey(row), paging, revision);
  const metadata = { resourceVersion: String(revision), ...(served.continueToken && { continue: served.continueToken, remainingItemCount: served.remainingItemCount }) };
  return eventsResponse(served.items.map(({ event }) => event), request, api, metadata);
}

function getEvent(request: ApiRequest, api: ApiContext): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  const pod = name.replace(/\.[0-9a-f]{16}$/, "");
  const event = api.store
    .events({ namespace, pod })
    .map((row) => apiEvent(row, api.nodeName))
    .find((e) => e.metadata.name === name);
  if (!event) throw ApiError.notFound("events", name);
  return eventsResponse([event], request, api, { resourceVersion: event.metadata.resourceVersion }, true);
}

/**
 * Sorts as the store orders events (last occurrence, then row id). An event repeated between two
 * pages moves to the end and shows again there, as an object changed during a paged list may.
 */
function resumeKey(row: EventRow): string {
  return `${String(row.lastAt).padStart(15, "0")}/${String(row.id).padStart(12, "0")}`;
}

export const eventRoutes: Route[] = [
  { method: "GET", path: "/api/v1/events", handle: listEvents },
  { method: "GET", path: "/api/v1/namespaces/:namespace/events", handle: listEvents },
  { method: "GET", path: "/api/v1/namespaces/:namespace/events/:name", handle: getEvent },
];
