/**
 * `application/strategic-merge-patch+json`, as apimachinery's strategicpatch applies it: maps merge
 * key by key (null deletes), a list whose field says `patchStrategy: merge` merges element by
 * element on its merge key (a list of primitives as a set), every other list is replaced. The
 * directives kubectl sends are honoured: `$patch: replace|delete|merge` on a map or list element,
 * `$retainKeys`, `$setElementOrder/FIELD` and `$deleteFromPrimitiveList/FIELD`.
 */
import { clone, isObject, PatchError, type Json, type JsonObject } from "./json.ts";
import { PatchSchema, type FieldPatchMeta } from "./patch-schema.ts";

const DIRECTIVE = "$patch";
const RETAIN_KEYS = "$retainKeys";
const SET_ELEMENT_ORDER = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/";

/** `original` with `patch` applied; `original` is not changed. */
export function strategicMergePatch(original: JsonObject, patch: JsonObject, schema: PatchSchema = PatchSchema.POD): JsonObject {
  return mergeMap(clone(original), patch, schema, "");
}

function isDirectiveKey(key: string): boolean {
  return key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Merges `patch` into `original` (mutated and returned). */
function mergeMap(original: JsonObject, patch: JsonObject, schema: PatchSchema | undefined, path: string): JsonObject {
  const directive = patch[DIRECTIVE];
  if (directive === "replace") {
    const { [DIRECTIVE]: _, ...rest } = patch;
    return mergeMap({}, rest, schema, path);
  }
  if (directive !== undefined && directive !== "merge") {
    throw new PatchError(`${path || "the patch"}: unknown patch type: ${JSON.stringify(directive)} in map`);
  }
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain) || !retain.every((key) => typeof key === "string")) {
      throw new PatchError(`${join(path, RETAIN_KEYS)}: must be a list of field names, got ${JSON.stringify(retain)}`);
    }
    const unretained = Object.keys(patch).find((key) => !isDirectiveKey(key) && !retain.includes(key));
    if (unretained) throw new PatchError(`${join(path, RETAIN_KEYS)}: the patch sets ${unretained}, which $retainKeys does not keep`);
    for (const key of Object.keys(original)) if (!retain.includes(key)) delete original[key];
  }
  // As apimachinery does: each $setElementOrder first, with the list it orders; then deletions
  // from primitive lists; then every other field.
  const ordered = new Set<string>();
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = key.slice(SET_ELEMENT_ORDER.length);
    if (!Array.isArray(order)) throw new PatchError(`${join(path, key)}: must be a list, got ${JSON.stringify(order)}`);
    const before = original[field];
    const meta = schema?.field(field);
    if (patch[field] !== undefined) {
      mergeField(original, field, patch[field]!, meta, join(path, field));
      ordered.add(field);
    }
    const merged = original[field];
    if (Array.isArray(merged)) original[field] = inElementOrder(merged, order, Array.isArray(before) ? before : [], meta?.mergeKey);
  }
  for (const [key, values] of Object.entries(patch)) {
    if (!key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    if (!Array.isArray(values)) throw new PatchError(`${join(path, key)}: must be a list, got ${JSON.stringify(values)}`);
    const current = original[field];
    if (current === undefined) continue;
    if (!Array.isArray(current)) throw new PatchError(`${join(path, field)}: $deleteFromPrimitiveList names a field that is not a list`);
    original[field] = current.filter((item) => !values.some((value) => sameValue(value, item)));
  }
  for (const [key, value] of Object.entries(patch)) {
    if (isDirectiveKey(key) || ordered.has(key)) continue;
    mergeField(original, key, value, schema?.field(key), join(path, key));
  }
  return original;
}

/** Merges one field of the patch into `original` (mutated), by the field's patch strategy. */
function mergeField(original: JsonObject, key: string, value: Json, meta: FieldPatchMeta | undefined, where: string): void {
  const current = original[key];
  if (value === null || (isObject(value) && value[DIRECTIVE] === "delete")) {
    delete original[key];
  } else if (isObject(value) && isObject(current) && !meta?.strategies.includes("replace")) {
    original[key] = mergeMap(current, value, meta?.schema, where);
  } else if (Array.isArray(value) && meta?.strategies.includes("merge")) {
    original[key] = mergeList(Array.isArray(current) ? current : [], value, meta, where);
  } else {
    original[key] = fresh(value, meta, where);
  }
}

/** A patch value with nothing under it in the original: its directives and nulls are resolved against nothing. */
function fresh(value: Json, meta: FieldPatchMeta | undefined, path: string): Json {
  if (isObject(value)) return mergeMap({}, value, meta?.schema, path);
  if (Array.isArray(value) && meta?.strategies.includes("merge")) return mergeList([], value, meta, path);
  return clone(value);
}

function mergeList(original: Json[], patch: Json[], meta: FieldPatchMeta, path: string): Json[] {
  if (patch.every((item) => !isObject(item))) {
    if (patch.some(Array.isArray)) throw new PatchError(`${path}: lists of lists cannot be merged`);
    const union = [...original, ...patch.filter((item, index) => !original.some((o) => sameValue(o, item)) && patch.findIndex((p) => sameValue(p, item)) === index)];
    return inElementOrder(union, patch, original, undefined);
  }
  const elements = patch.map((item, index) => {
    if (!isObject(item)) throw new PatchError(`${path}[${index}]: a list merged by key holds only objects, got ${JSON.stringify(item)}`);
    return item;
  });
  const replace = elements.find((item) => item[DIRECTIVE] === "replace");
  if (replace) {
    return elements.filter((item) => item !== replace).map((item, index) => mergeMap({}, item, meta.schema, `${path}[${index}]`));
  }
  const key = meta.mergeKey;
  if (!key) throw new PatchError(`${path}: the list has no merge key to merge by`);
  let merged = [...original];
  for (const item of elements) {
    if (item[DIRECTIVE] !== "delete") continue;
    if (item[key] === undefined) throw new PatchError(`${path}: map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    merged = merged.filter((element) => !(isObject(element) && sameValue(element[key]!, item[key]!)));
  }
  // The server's order is the list once the deletions are done.
  const serverOrder = [...merged];
  const sent: JsonObject[] = [];
  for (const [index, item] of elements.entries()) {
    const value = item[key];
    if (value === undefined) throw new PatchError(`${path}[${index}]: map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const directive = item[DIRECTIVE];
    if (directive === "delete") continue;
    if (directive !== undefined) throw new PatchError(`${path}[${index}]: unknown patch type: ${JSON.stringify(directive)} in list`);
    sent.push(item);
    const at = merged.findIndex((element) => isObject(element) && sameValue(element[key]!, value));
    const where = `${path}[${index}]`;
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, item, meta.schema, where);
    else merged.push(mergeMap({}, item, meta.schema, where));
  }
  return inElementOrder(merged, sent, serverOrder, key);
}

/**
 * The merged list in the order apimachinery gives it: the elements `order` names (the patch list,
 * or a `$setElementOrder`) in that order, the others (the server's own) in the server's order,
 * and the two interleaved where the server's order places them, an element the server does not
 * know (a new one) taking its place in the patch's sequence.
 */
function inElementOrder(merged: Json[], order: Json[], serverOrder: Json[], mergeKey: string | undefined): Json[] {
  const identity = (item: Json): Json => (mergeKey && isObject(item) ? (item[mergeKey] ?? null) : item);
  const indexIn = (list: Json[], item: Json) => list.findIndex((entry) => sameValue(identity(entry), identity(item)));
  const rank = (list: Json[]) => (item: Json) => {
    const at = indexIn(list, item);
    return at < 0 ? Infinity : at;
  };
  const byRank = (of: (item: Json) => number) => (a: Json, b: Json) => (of(a) === of(b) ? 0 : of(a) < of(b) ? -1 : 1);
  const sent = merged.filter((item) => indexIn(order, item) >= 0).sort(byRank(rank(order)));
  const serverOnly = merged.filter((item) => indexIn(order, item) < 0).sort(byRank(rank(serverOrder)));
  const result: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < sent.length) {
    if (j >= sent.length) result.push(serverOnly[i++]!);
    else if (i >= serverOnly.length) result.push(sent[j++]!);
    else {
      const left = indexIn(serverOrder, serverOnly[i]!);
      const right = indexIn(serverOrder, sent[j]!);
      if (left >= 0 && right >= 0 && left < right) result.push(serverOnly[i++]!);
      else result.push(sent[j++]!);
    }
  }
  return result;
}

function sameValue(a: Json, b: Json): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
