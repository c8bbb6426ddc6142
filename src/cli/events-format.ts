/**
 * `events` output like `kubectl events` (kubectl/pkg/cmd/events/event_printer.go): LAST SEEN,
 * TYPE, REASON, OBJECT, MESSAGE through kubectl's get tabwriter (minwidth 6, padding 3), with
 * `5s (x4 over 2m)` for repeats; `-o json|yaml` prints v1 Events in a List.
 */
import { isoTime } from "../status/time.ts";
import { serializeObject } from "../status/serialize.ts";
import type { EventRow } from "../store/queries.ts";
import { eventAge } from "./describe-pod.ts";
import { TabWriter } from "./tabwriter.ts";

export const EVENT_HEADER: readonly string[] = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"];

/** One event's cells in the table. */
export function eventCells(e: EventRow, now: number): string[] {
  return [eventAge(e, now), e.type, e.reason, `pod/${e.pod}`, oneLine(e.message.trim())];
}

/** The header and rows; `header: false` for the rows `-w` appends later. */
export function formatEventRows(events: EventRow[], now: number, header = true): string {
  const w = new TabWriter({ minWidth: 6, padding: 3 });
  if (header) w.write(`${EVENT_HEADER.join("\t")}\n`);
  for (const e of events) w.write(`${eventCells(e, now).join("\t")}\n`);
  return w.toString();
}

/** kubectl's escapeCell: a cell ends at its first line break. */
function oneLine(text: string): string {
  const index = text.search(/[\f\n\r]/);
  return index >= 0 ? `${text.slice(0, index)}...` : text;
}

/** A v1 Event as the API server would serve the kubelet's event. */
export function eventObject(e: EventRow): Record<string, unknown> {
  const involvedObject: Record<string, unknown> = { apiVersion: "v1", kind: "Pod", name: e.pod, namespace: e.namespace, uid: e.podUid };
  if (e.container) involvedObject.fieldPath = `spec.containers{${e.container}}`;
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${e.pod}.${e.id.toString(16).padStart(16, "0")}`, namespace: e.namespace },
    involvedObject,
    type: e.type,
    reason: e.reason,
    message: e.message,
    count: e.count,
    firstTimestamp: isoTime(e.firstAt),
    lastTimestamp: isoTime(e.lastAt),
    source: { component: "kubelet" },
    reportingComponent: "kubelet",
  };
}

/** The List around the events, without its items. */
export function eventListEnvelope(): Record<string, unknown> {
  return { apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" } };
}

export function formatEventList(events: EventRow[], format: "json" | "yaml"): string {
  return serializeObject({ ...eventListEnvelope(), items: events.map(eventObject) }, format);
}
