/**
 * ConfigMaps, Secrets and ServiceAccounts as the API server defines them for its generic store: the
 * stored form a write decodes to (a Secret's `stringData` merged into `data`, its type defaulted),
 * the validation of a create and of an update, the field labels, and the Table the API server's
 * printers draw (pkg/printers/internalversion). objects-api.ts serves all three from this table.
 */
import { timestampSince } from "../../../printers/age.ts";
import type { ObjectResource } from "../../../store/object-store.ts";
import { ApiError, type StatusCause } from "../../http/status.ts";
import { column, type TableColumn } from "../../http/table.ts";
import { configMapCauses, immutableCauses, SECRET_TYPES, secretCauses, secretTypeCauses, serviceAccountCauses } from "./object-validation.ts";

type Json = Record<string, unknown>;

export interface ObjectKind {
  resource: ObjectResource;
  kind: string;
  singular: string;
  shortNames: string[];
  /** The top-level fields the type has beside apiVersion, kind and metadata: anything else is an unknown field. */
  fields: readonly string[];
  /** The field labels a fieldSelector may name (the registry's ToSelectableFields). */
  selectableFields: readonly string[];
  /** The stored form of a decoded body (its fields type-checked: a 400 in the decoder's words otherwise). */
  decode(body: Json): Json;
  /** ValidateX: the causes of a 422. */
  validate(object: Json): StatusCause[];
  /** ValidateXUpdate beyond validate(): what the stored object forbids the new one. */
  validateUpdate(before: Json, after: Json): StatusCause[];
  columns: TableColumn[];
  cells(object: Json, now: number): (string | number)[];
  fieldValue(object: Json, field: string): string;
}

const NAME_COLUMN = column(
  "Name",
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
  { format: "name" },
);
const AGE_COLUMN = column(
  "Age",
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
);

const metadataOf = (object: Json) => (object.metadata ?? {}) as { name?: string; namespace?: string; creationTimestamp?: string };
const age = (object: Json, now: number) => timestampSince(metadataOf(object).creationTimestamp ?? "", now);
const size = (map: unknown) => Object.keys((map ?? {}) as Json).length;

function metadataField(object: Json, field: string): string {
  if (field === "metadata.name") return metadataOf(object).name ?? "";
  if (field === "metadata.namespace") return metadataOf(object).namespace ?? "";
  return "";
}

/** The decoder's 400 for a field of the wrong type, as the API server words a JSON unmarshal error. */
function cannotDecode(kind: string, detail: string): ApiError {
  return ApiError.badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${detail}`);
}

function stringMap(kind: string, body: Json, field: string): Record<string, string> | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw cannotDecode(kind, `json: cannot unmarshal ${jsonType(value)} into Go struct field ${kind}.${field} of type map[string]string`);
  for (const [key, entry] of Object.entries(value as Json)) {
    if (typeof entry !== "string") throw cannotDecode(kind, `json: cannot unmarshal ${jsonType(entry)} into Go struct field ${kind}.${field} of type string (key ${JSON.stringify(key)})`);
  }
  return value as Record<string, string>;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A map of []byte: base64 strings, each checked as Go's decoder checks it. */
function bytesMap(kind: string, body: Json, field: string): Record<string, string> | undefined {
  const map = stringMap(kind, body, field);
  for (const value of Object.values(map ?? {})) {
    if (value.length % 4 !== 0 || !BASE64.test(value)) throw cannotDecode(kind, `illegal base64 data at input byte ${badBase64Offset(value)}`);
  }
  return map;
}

function badBase64Offset(value: string): number {
  const bad = [...value].findIndex((c) => !/[A-Za-z0-9+/=]/.test(c));
  return bad >= 0 ? bad : Math.floor(value.length / 4) * 4;
}

function optionalBoolean(kind: string, body: Json, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw cannotDecode(kind, `json: cannot unmarshal ${jsonType(value)} into Go struct field ${kind}.${field} of type bool`);
  return value;
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  return typeof value === "object" ? "object" : typeof value;
}

/** Only the fields that are set: a stored object carries no nulls or empty optionals. */
function defined(object: Json): Json {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

const CONFIG_MAP: ObjectKind = {
  resource: "configmaps",
  kind: "ConfigMap",
  singular: "configmap",
  shortNames: ["cm"],
  fields: ["data", "binaryData", "immutable"],
  selectableFields: ["metadata.name", "metadata.namespace"],
  decode: (body) =>
    defined({
      metadata: body.metadata,
      data: stringMap("ConfigMap", body, "data"),
      binaryData: bytesMap("ConfigMap", body, "binaryData"),
      immutable: optionalBoolean("ConfigMap", body, "immutable"),
    }),
  validate: configMapCauses,
  validateUpdate: (before, after) => immutableCauses(before, after, ["data", "binaryData"]),
  columns: [
    NAME_COLUMN,
    column("Data", "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."),
    AGE_COLUMN,
  ],
  cells: (object, now) => [metadataOf(object).name ?? "", size(object.data) + size(object.binaryData), age(object, now)],
  fieldValue: metadataField,
};

/** A Secret's stored form: `stringData` written into `data` (it wins over a key in both), the type defaulted to Opaque. */
function decodeSecret(body: Json): Json {
  const data = { ...(bytesMap("Secret", body, "data") ?? {}) };
  for (const [key, value] of Object.entries(stringMap("Secret", body, "stringData") ?? {})) data[key] = Buffer.from(value, "utf8").toString("base64");
  const type = body.type ?? SECRET_TYPES.opaque;
  if (typeof type !== "string") throw cannotDecode("Secret", `json: cannot unmarshal ${jsonType(type)} into Go struct field Secret.type of type v1.SecretType`);
  return defined({
    metadata: body.metadata,
    data: Object.keys(data).length > 0 ? data : undefined,
    type: type === "" ? SECRET_TYPES.opaque : type,
    immutable: optionalBoolean("Secret", body, "immutable"),
  });
}

const SECRET: ObjectKind = {
  resource: "secrets",
  kind: "Secret",
  singular: "secret",
  shortNames: [],
  fields: ["data", "stringData", "type", "immutable"],
  selectableFields: ["metadata.name", "metadata.namespace", "type"],
  decode: decodeSecret,
  validate: secretCauses,
  validateUpdate: (before, after) => [...secretTypeCauses(before, after), ...immutableCauses(before, after, ["data"])],
  columns: [
    NAME_COLUMN,
    column("Type", "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
    column("Data", "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
    AGE_COLUMN,
  ],
  cells: (object, now) => [metadataOf(object).name ?? "", String(object.type ?? ""), size(object.data), age(object, now)],
  fieldValue: (object, field) => (field === "type" ? String(object.type ?? "") : metadataField(object, field)),
};

/** A list of object references ({name}), as a ServiceAccount's secrets and imagePullSecrets hold them. */
function references(body: Json, field: string): Json[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((item) => item === null || typeof item !== "object" || Array.isArray(item))) {
    throw cannotDecode("ServiceAccount", `json: cannot unmarshal ${jsonType(value)} into Go struct field ServiceAccount.${field} of type []v1.${field === "secrets" ? "ObjectReference" : "LocalObjectReference"}`);
  }
  return value as Json[];
}

const SERVICE_ACCOUNT: ObjectKind = {
  resource: "serviceaccounts",
  kind: "ServiceAccount",
  singular: "serviceaccount",
  shortNames: ["sa"],
  fields: ["secrets", "imagePullSecrets", "automountServiceAccountToken"],
  selectableFields: ["metadata.name", "metadata.namespace"],
  decode: (body) =>
    defined({
      metadata: body.metadata,
      secrets: references(body, "secrets"),
      imagePullSecrets: references(body, "imagePullSecrets"),
      automountServiceAccountToken: optionalBoolean("ServiceAccount", body, "automountServiceAccountToken"),
    }),
  validate: serviceAccountCauses,
  validateUpdate: () => [],
  columns: [NAME_COLUMN, AGE_COLUMN],
  cells: (object, now) => [metadataOf(object).name ?? "", age(object, now)],
  fieldValue: metadataField,
};

export const OBJECT_KINDS: readonly ObjectKind[] = [CONFIG_MAP, SECRET, SERVICE_ACCOUNT];

export function objectKind(resource: ObjectResource): ObjectKind {
  return OBJECT_KINDS.find((kind) => kind.resource === resource)!;
}
