/**
 * The v1 Pod's fields, for the API server's strict field validation: a field the API does not know
 * (`comand:` for `command:`) is silently dropped by a lenient decoder, so the pod runs without it.
 * The API server warns (`unknown field "spec.containers[0].comand"`) or, with
 * fieldValidation=Strict, refuses. What the API knows is its own OpenAPI schemas (v1-schemas.json,
 * v1.37.2's as its API server serves them), down to the last nested field: a field minikubelet
 * does not read is still known, and only a name the v1 API lacks is unknown.
 */
import type { FieldPath } from "./errors.ts";
import { isPlainObject } from "./fields.ts";
import schemas from "./v1-schemas.json";

type Schema = Record<string, unknown>;

const SCHEMAS = schemas as Record<string, Schema>;
const REF_PREFIX = "#/components/schemas/";
const POD = "io.k8s.api.core.v1.Pod";

/** A schema with its `$ref` (or the `allOf: [{$ref}]` that carries a description) followed. */
function resolved(schema: Schema): Schema {
  const ref = (schema.$ref as string | undefined) ?? ((schema.allOf as Schema[] | undefined)?.[0]?.$ref as string | undefined);
  return ref?.startsWith(REF_PREFIX) ? (SCHEMAS[ref.slice(REF_PREFIX.length)] ?? {}) : schema;
}

/**
 * Paths of every field of `raw` that the v1 Pod does not have, in document order. A list is
 * checked element by element against its item schema; a value of the wrong type is left to the
 * validator, which names it.
 */
export function unknownFields(raw: unknown): FieldPath[] {
  const found: FieldPath[] = [];
  // Another kind's fields are not a Pod's typos: the kind itself is the problem, and says so.
  if (isPlainObject(raw) && raw.kind !== undefined && raw.kind !== "Pod") return found;
  walk(raw, SCHEMAS[POD]!, [], found);
  return found;
}

function walk(value: unknown, schema: Schema, path: FieldPath, found: FieldPath[]): void {
  const own = resolved(schema);
  if (Array.isArray(value)) {
    const items = own.type === "array" && isPlainObject(own.items) ? own.items : undefined;
    if (items) value.forEach((item, index) => walk(item, items, [...path, index], found));
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = isPlainObject(own.properties) ? own.properties : undefined;
  const additional = isPlainObject(own.additionalProperties) ? own.additionalProperties : undefined;
  // A map (labels, limits) takes any key; an object the schema leaves open (no properties) takes any field.
  if (!properties) {
    if (additional) for (const [key, child] of Object.entries(value)) walk(child, additional, [...path, key], found);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    const known = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!isPlainObject(known)) found.push([...path, key]);
    else walk(child, known, [...path, key], found);
  }
}

/**
 * `raw` as the API server keeps it after decoding: the fields the v1 Pod does not have are dropped
 * (a warning names each, unknownFields), the rest is a copy of what was written.
 */
export function withoutUnknownFields(raw: unknown): unknown {
  const copy = structuredClone(raw);
  for (const path of unknownFields(copy)) {
    let node: unknown = copy;
    for (const part of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[part];
    delete (node as Record<string | number, unknown>)[path.at(-1)!];
  }
  return copy;
}
