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

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}
