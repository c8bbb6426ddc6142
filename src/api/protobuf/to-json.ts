/**
 * A decoded protobuf message as the API server's JSON would carry the same Go object: field names as
 * in JSON, omitempty where Go omits, embedded structs inlined, and Kubernetes' own wire shapes
 * printed as their JSON forms (IntOrString as a number or a string, Quantity as its string, Time as
 * RFC 3339, FieldsV1 as its JSON document, ExtraValue as a list). How Go prints a field is not on
 * the wire (a pointer and a value both arrive set); the schema says it with its `(json)` option:
 *
 *   "zero"       a value without omitempty, or a struct: printed even when zero or absent
 *   "omitempty"  a value with omitempty: left out when zero
 *   "null"       a pointer, slice or map without omitempty: null when absent
 *   (none)       a pointer, slice or map with omitempty: printed only when present
 */
import protobuf from "protobufjs";
import type { MessageType } from "./schema.ts";

export type JsonObject = Record<string, unknown>;
type Message = Record<string, unknown>;
type JsonMode = "zero" | "omitempty" | "null" | undefined;

const TIME = ".k8s.io.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME = ".k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime";
const QUANTITY = ".k8s.io.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING = ".k8s.io.apimachinery.pkg.util.intstr.IntOrString";
const FIELDS_V1 = ".k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1";
const EXTRA_VALUES = new Set([".k8s.io.api.authentication.v1.ExtraValue", ".k8s.io.api.authorization.v1.ExtraValue"]);

/** The JSON object Go would print for `message`, a decoded `type`. */
export function messageToJson(type: MessageType, message: Message): JsonObject {
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    if (field.options?.["(inline)"] === true) {
      // An embedded struct is a value: absent, it is its zero value, whose printed fields still show.
      const embedded = Object.hasOwn(message, field.name) ? (message[field.name] as Message) : {};
      Object.assign(out, messageToJson(field.resolvedType as MessageType, embedded));
      continue;
    }
    const printed = fieldToJson(field, message);
    if (printed !== undefined) out[field.name] = printed;
  }
  return out;
}

function fieldToJson(field: protobuf.Field, message: Message): unknown {
  const mode = field.options?.["(json)"] as JsonMode;
  if (field.map) {
    const entries = Object.entries((message[field.name] ?? {}) as Message);
    if (entries.length === 0) return mode === "null" ? null : undefined;
    // encoding/json prints a map's keys sorted.
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, value]) => [key, valueToJson(field, value)]));
  }
  if (field.repeated) {
    const items = (message[field.name] ?? []) as unknown[];
    if (items.length === 0) return mode === "null" ? null : undefined;
    return items.map((item) => valueToJson(field, item));
  }
  if (!Object.hasOwn(message, field.name)) {
    if (mode === "zero") return zeroValue(field);
    return mode === "null" ? null : undefined;
  }
  const value = valueToJson(field, message[field.name]);
  if (mode === "omitempty" && (value === "" || value === 0 || value === false)) return undefined;
  return value;
}

function zeroValue(field: protobuf.Field): unknown {
  if (field.resolvedType instanceof protobuf.Type) return valueToJson(field, {});
  switch (field.type) {
    case "string":
      return "";
    case "bool":
      return false;
    case "bytes":
      return null;
    default:
      return 0;
  }
}

function valueToJson(field: protobuf.Field, value: unknown): unknown {
  const type = field.resolvedType;
  if (type instanceof protobuf.Type) {
    const special = specialToJson(type, value as Message);
    return special === NOT_SPECIAL ? messageToJson(type, value as Message) : special;
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  // int64s arrive as Long objects (protobufjs loads `long` when it can) or as numbers.
  return typeof value === "object" && value !== null ? integer(value) : value;
}

const NOT_SPECIAL = Symbol("not special");

/** The Kubernetes types whose JSON is not an object of their fields; NOT_SPECIAL for any other. */
function specialToJson(type: MessageType, message: Message): unknown {
  switch (type.fullName) {
    case TIME:
      // metav1.Time keeps whole seconds and prints the zero time (an empty message) as null.
      return Object.hasOwn(message, "seconds") ? rfc3339(integer(message.seconds)) : null;
    case MICRO_TIME:
      return Object.hasOwn(message, "seconds") ? rfc3339(integer(message.seconds), Math.floor(Number(message.nanos ?? 0) / 1000)) : null;
    case QUANTITY:
      return typeof message.string === "string" && message.string !== "" ? message.string : "0";
    case INT_OR_STRING:
      return integer(message.type ?? 0) === 1 ? String(message.strVal ?? "") : Number(message.intVal ?? 0);
    case FIELDS_V1:
      return fieldsV1(message.Raw);
  }
  if (EXTRA_VALUES.has(type.fullName)) {
    const items = (message.items ?? []) as string[];
    return items.length === 0 ? null : [...items];
  }
  return NOT_SPECIAL;
}

function integer(value: unknown): number {
  if (typeof value === "number") return value;
  const { low, high, unsigned } = value as { low: number; high: number; unsigned: boolean };
  return protobuf.util.LongBits.from({ low, high, unsigned } as never).toNumber(unsigned);
}

/** Go's RFC 3339 in UTC: whole seconds (Time), or with six fractional digits (MicroTime). */
function rfc3339(unixSeconds: number, micros?: number): string {
  const whole = new Date(unixSeconds * 1000).toISOString().slice(0, 19);
  return micros === undefined ? `${whole}Z` : `${whole}.${String(micros).padStart(6, "0")}Z`;
}

function fieldsV1(raw: unknown): unknown {
  if (!(raw instanceof Uint8Array) || raw.length === 0) return null;
  return JSON.parse(new TextDecoder().decode(raw));
}
