/**
 * A two-way strategic merge patch from one version of an object to the next, as apimachinery's
 * CreateTwoWayMergePatch builds the kubelet's PatchNodeStatus: maps carry only what changed (a
 * removed key is null), a list merged on a key carries its changed elements (a removed one as
 * `$patch: delete`) and `$setElementOrder/FIELD` with the new order, any other list is replaced
 * whole. The lists merged on a key are named by path, so the caller states its schema.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A list field (by its dotted path from the root, `status.conditions`) and the key its elements merge on. */
export type MergeKeys = Record<string, string>;

/** The patch that takes `original` to `modified`; `{}` when they are equal. */
export function twoWayMergePatch(original: JsonObject, modified: JsonObject, mergeKeys: MergeKeys): JsonObject {
  return diffMaps(original, modified, mergeKeys, "");
}

function diffMaps(original: JsonObject, modified: JsonObject, mergeKeys: MergeKeys, path: string): JsonObject {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(modified)) {
    const before = original[key];
    const at = path === "" ? key : `${path}.${key}`;
    if (before === undefined) {
      patch[key] = value;
    } else if (isObject(before) && isObject(value)) {
      const inner = diffMaps(before, value, mergeKeys, at);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (Array.isArray(before) && Array.isArray(value) && mergeKeys[at] !== undefined) {
      const list = diffMergedList(before, value, mergeKeys[at]!, mergeKeys, at);
      if (list.length > 0) {
        patch[`$setElementOrder/${key}`] = value.map((element) => ({ [mergeKeys[at]!]: (element as JsonObject)[mergeKeys[at]!]! }));
        patch[key] = list;
      }
    } else if (!jsonEqual(before, value)) {
      patch[key] = value;
    }
  }
  for (const key of Object.keys(original)) if (!(key in modified)) patch[key] = null;
  return patch;
}

function diffMergedList(original: Json[], modified: Json[], mergeKey: string, mergeKeys: MergeKeys, path: string): Json[] {
  const keyOf = (element: Json) => (element as JsonObject)[mergeKey];
  const changes: Json[] = [];
  for (const element of modified) {
    const before = original.find((candidate) => keyOf(candidate) === keyOf(element));
    if (before === undefined) {
      changes.push(element);
      continue;
    }
    const inner = diffMaps(before as JsonObject, element as JsonObject, mergeKeys, path);
    if (Object.keys(inner).length > 0) changes.push({ [mergeKey]: keyOf(element)!, ...inner });
  }
  for (const element of original) {
    if (!modified.some((candidate) => keyOf(candidate) === keyOf(element))) changes.push({ $patch: "delete", [mergeKey]: keyOf(element)! });
  }
  return changes;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Equal as JSON values (a map's key order does not count). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((value, index) => jsonEqual(value, b[index]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && jsonEqual(a[key], b[key]));
  }
  return false;
}
