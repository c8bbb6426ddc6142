/**
 * Stand-ins the watch uses until api-objects' selectors.ts and table.ts land: a field/label selector matcher and the one-row Tables. Everything here is
 * reached only through the `WatchSeams` interface in watch-kinds.ts, so swapping these for the
 * real modules is one change there.
 */
import { eventAge } from "../cli/describe-pod.ts";
import { humanDuration } from "../status/age.ts";
import { printPodRow } from "../status/printer.ts";
import { podCells } from "../status/pod-table.ts";
import type { V1Pod } from "../status/v1.ts";
import { ApiError } from "./status.ts";

/** A parsed `fieldSelector` + `labelSelector`: does an object's fields and labels match both. */
export interface ObjectMatcher {
  matches(fields: (field: string) => string | undefined, labels: Readonly<Record<string, string>>): boolean;
}

interface Requirement {
  key: string;
  equal: boolean;
  /** Undefined for a label existence test (`app`, `!app`). */
  value: string | undefined;
}

/**
 * `k=v,k==v,k!=v` for fields (each key one of `known`), and the same plus `k`/`!k` for labels.
 * A malformed term is a 400 naming it, as the API server answers.
 */
export function parseSelectors(fieldSelector: string | null, labelSelector: string | null, known: readonly string[]): ObjectMatcher {
  const fields = parseTerms(fieldSelector ?? "", "field");
  for (const term of fields) {
    if (!known.includes(term.key)) throw ApiError.badRequest(`field label not supported: ${term.key}`);
  }
  const labels = parseTerms(labelSelector ?? "", "label");
  return {
    matches(fieldOf, labelsOf) {
      const fieldsMatch = fields.every((term) => ((fieldOf(term.key) ?? "") === term.value) === term.equal);
      return fieldsMatch && labels.every((term) => (term.value === undefined ? term.key in labelsOf === term.equal : (labelsOf[term.key] === term.value) === term.equal));
    },
  };
}

function parseTerms(selector: string, kind: "field" | "label"): Requirement[] {
  const terms: Requirement[] = [];
  for (const raw of selector.split(",")) {
    const term = raw.trim();
    if (term === "") continue;
    const match = /^([^=!\s]+)\s*(==|=|!=)\s*([^=!,\s]*)$/.exec(term);
    if (match) {
      terms.push({ key: match[1]!, equal: match[2] !== "!=", value: match[3]! });
    } else if (kind === "label" && /^!?[A-Za-z0-9][-A-Za-z0-9_./]*$/.test(term)) {
      terms.push({ key: term.replace(/^!/, ""), equal: !term.startsWith("!"), value: undefined });
    } else {
      throw ApiError.badRequest(`unable to parse requirement: invalid ${kind} selector: ${JSON.stringify(term)}`);
    }
  }
  return terms;
}

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

function columns(list: [name: string, type: string, priority: number][]): ColumnDefinition[] {
  return list.map(([name, type, priority]) => ({ name, type, format: name === "Name" ? "name" : "", description: "", priority }));
}

export const POD_COLUMNS = columns([
  ["Name", "string", 0],
  ["Ready", "string", 0],
  ["Status", "string", 0],
  ["Restarts", "string", 0],
  ["Age", "string", 0],
  ["IP", "string", 1],
  ["Node", "string", 1],
  ["Nominated Node", "string", 1],
  ["Readiness Gates", "string", 1],
]);

export const EVENT_COLUMNS = columns([
  ["Last Seen", "string", 0],
  ["Type", "string", 0],
  ["Reason", "string", 0],
  ["Object", "string", 0],
  ["Subobject", "string", 1],
  ["Source", "string", 1],
  ["Message", "string", 0],
  ["First Seen", "string", 1],
  ["Count", "integer", 1],
  ["Name", "string", 1],
]);

export function podCellsOf(pod: V1Pod, now: number): unknown[] {
  return podCells(printPodRow(pod, now), { wide: true, allNamespaces: false });
}

/** The event's cells from its v1 object (the shape watch-kinds.ts builds). */
export function eventCellsOf(event: Record<string, any>, now: number): unknown[] {
  const firstAt = Date.parse(event.firstTimestamp);
  const lastAt = Date.parse(event.lastTimestamp);
  const involved = event.involvedObject ?? {};
  return [
    eventAge({ count: 1, firstAt: lastAt, lastAt }, now),
    event.type,
    event.reason,
    `${String(involved.kind ?? "").toLowerCase()}/${involved.name}`,
    involved.fieldPath ?? "",
    [event.source?.component, event.source?.host].filter(Boolean).join(", "),
    String(event.message ?? "").trim(),
    humanDuration(now - firstAt),
    event.count,
    event.metadata?.name,
  ];
}
