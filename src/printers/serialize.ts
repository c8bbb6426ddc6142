/**
 * `-o json` and `-o yaml` the way kubectl prints API objects: keys in sorted order (kubectl
 * prints unstructured maps, which Go marshals sorted), JSON indented by four spaces, YAML with
 * list items at their parent's indentation (`items:\n- apiVersion: v1`).
 */
import YAML from "yaml";

export type SerializedFormat = "json" | "yaml";

/** `value` rendered in `format`, ending with a newline. */
export function serializeObject(value: unknown, format: SerializedFormat): string {
  const sorted = sortKeys(value);
  if (format === "json") return `${JSON.stringify(sorted, null, 4)}\n`;
  return YAML.stringify(sorted, { indentSeq: false, lineWidth: 0 });
}

/** A list's text in pieces, as serializeObject renders it whole: what precedes the items, each item, what follows. */
export interface ListPieces {
  head: string;
  /** The item's text, `first` being the list's first item. */
  item(value: unknown, first: boolean): string;
  tail: string;
}

const ITEM_MARK = "minikubelet-list-item";

/**
 * `envelope` with its items written one at a time (a list too long to hold): serializeObject of the
 * envelope with one marker item, cut around the marker. Without items, serializeObject the whole.
 */
export function listPieces(envelope: Record<string, unknown>, format: SerializedFormat): ListPieces {
  const text = serializeObject({ ...envelope, items: [ITEM_MARK] }, format);
  const lineStart = text.lastIndexOf("\n", text.indexOf(ITEM_MARK)) + 1;
  const lineEnd = text.indexOf("\n", text.indexOf(ITEM_MARK));
  const head = text.slice(0, lineStart);
  const tail = text.slice(lineEnd);
  if (format === "json") {
    const indent = " ".repeat(text.indexOf('"', lineStart) - lineStart);
    return { head, tail, item: (value, first) => (first ? "" : ",\n") + JSON.stringify(sortKeys(value), null, 4).replaceAll(/^/gm, indent) };
  }
  // YAML's items sit at their key's indentation (indentSeq: false), so a one-item sequence is the item as the list prints it.
  return { head, tail: tail.slice(1), item: (value) => YAML.stringify([sortKeys(value)], { indentSeq: false, lineWidth: 0 }) };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}
