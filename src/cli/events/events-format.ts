/**
 * `events` output like `kubectl events` (kubectl/pkg/cmd/events/event_printer.go): LAST SEEN,
 * TYPE, REASON, OBJECT, MESSAGE through kubectl's get tabwriter (minwidth 6, padding 3), with
 * `5s (x4 over 2m)` for repeats; `-o json|yaml` prints v1 Events in a List.
 */
import { nodeNameOf } from "../../host/node-name.ts";
import { apiEvent, type V1Event } from "../../v1/event-object.ts";
import { serializeObject } from "../../printers/serialize.ts";
import type { EventRow } from "../../store/queries.ts";
import { eventAge } from "../describe/describe-pod.ts";
import { TabWriter } from "../tabwriter.ts";

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

/**
 * A v1 Event as the API serves it. The database does not record the node's name: the source host
 * is this host's, as the agent names its node without --node.
 */
export function eventObject(e: EventRow): V1Event {
  return apiEvent(e, nodeNameOf(""));
}

/** The List around the events, without its items. */
export function eventListEnvelope(): Record<string, unknown> {
  return { apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" } };
}

export function formatEventList(events: EventRow[], format: "json" | "yaml"): string {
  return serializeObject({ ...eventListEnvelope(), items: events.map(eventObject) }, format);
}
