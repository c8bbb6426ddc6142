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
    for (const key of Object.keys(original)) if (!retain.includes(key)) delete original[key];
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
    if (isDirectiveKey(key)) continue;
    const where = join(path, key);
    if (value === null) {
      delete original[key];
      continue;
    }
    const meta = schema?.field(key);
    const current = original[key];
    if (isObject(value) && value[DIRECTIVE] === "delete") {
      delete original[key];
    } else if (isObject(value) && isObject(current) && !meta?.strategies.includes("replace")) {
      original[key] = mergeMap(current, value, meta?.schema, where);
    } else if (Array.isArray(value) && meta?.strategies.includes("merge")) {
      original[key] = mergeList(Array.isArray(current) ? current : [], value, meta, where);
    } else {
      original[key] = fresh(value, meta, where);
    }
  }
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = key.slice(SET_ELEMENT_ORDER.length);
    if (!Array.isArray(order)) throw new PatchError(`${join(path, key)}: must be a list, got ${JSON.stringify(order)}`);
    const list = original[field];
    if (Array.isArray(list)) original[field] = reorder(list, order, schema?.field(field).mergeKey);
  }
  return original;
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
    return [...original, ...patch.filter((item, index) => !original.some((o) => sameValue(o, item)) && patch.findIndex((p) => sameValue(p, item)) === index)];
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
  const merged = [...original];
  for (const [index, item] of elements.entries()) {
    const value = item[key];
    if (value === undefined) throw new PatchError(`${path}[${index}]: map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const at = merged.findIndex((element) => isObject(element) && sameValue(element[key]!, value));
    const directive = item[DIRECTIVE];
    if (directive === "delete") {
      if (at >= 0) merged.splice(at, 1);
      continue;
    }
    if (directive !== undefined && directive !== "merge") throw new PatchError(`${path}[${index}]: unknown patch type: ${JSON.stringify(directive)} in list`);
    const where = `${path}[${index}]`;
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, item, meta.schema, where);
    else merged.push(mergeMap({}, item, meta.schema, where));
  }
  return merged;
}

/**
 * The merged list in `$setElementOrder`'s order: the elements the order names take, in that order,
 * the places such elements held; elements it does not name (the server's own) keep their places.
 */
function reorder(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const identity = (item: Json): Json | undefined => (mergeKey && isObject(item) ? item[mergeKey] : item);
  const rank = (item: Json) => order.findIndex((entry) => sameValue(identity(entry) ?? null, identity(item) ?? null));
  const slots = list.flatMap((item, index) => (rank(item) >= 0 ? [index] : []));
  const ordered = slots.map((index) => list[index]!).sort((a, b) => rank(a) - rank(b));
  const result = [...list];
  slots.forEach((slot, i) => (result[slot] = ordered[i]!));
  return result;
}

function sameValue(a: Json, b: Json): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
