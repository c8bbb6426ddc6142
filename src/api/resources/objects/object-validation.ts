/**
 * The API server's validation of ConfigMaps, Secrets and ServiceAccounts (pkg/apis/core/validation:
 * ValidateConfigMap, ValidateSecret, ValidateServiceAccount and their updates), as StatusCauses in
 * its words: key names, the 1 MiB bound on the data, a Secret type's required keys, and what
 * `immutable` freezes. A Secret's values never appear in a message.
 */
import { checkAnnotationsSize } from "../../../manifest/names.ts";
import { labelCauses } from "../object-meta.ts";
import type { StatusCause } from "../../http/status.ts";

type Json = Record<string, unknown>;

/** core.MaxSecretSize: the bound on a ConfigMap's or a Secret's data, in bytes. */
export const MAX_DATA_BYTES = 1024 * 1024;

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** The Secret types whose keys the API server requires, and the keys (core/types.go). */
export const SECRET_TYPES = {
  opaque: "Opaque",
  serviceAccountToken: "kubernetes.io/service-account-token",
  dockercfg: "kubernetes.io/dockercfg",
  dockerConfigJson: "kubernetes.io/dockerconfigjson",
  basicAuth: "kubernetes.io/basic-auth",
  sshAuth: "kubernetes.io/ssh-auth",
  tls: "kubernetes.io/tls",
} as const;

function invalid(field: string, value: unknown, detail: string): StatusCause {
  return { reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field };
}

function required(field: string): StatusCause {
  return { reason: "FieldValueRequired", message: "Required value", field };
}

function forbidden(field: string, detail: string): StatusCause {
  return { reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field };
}

/** IsConfigMapKey: why `key` cannot name an entry of data (or a file of a volume), one message per rule broken. */
export function configKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push("must be no more than 253 characters");
  if (!CONFIG_KEY.test(key)) problems.push(CONFIG_KEY_MESSAGE);
  if (key === ".") problems.push("must not be '.'");
  else if (key === "..") problems.push("must not be '..'");
  else if (key.startsWith("..")) problems.push("must not start with '..'");
  return problems;
}

/** ValidateObjectMeta for a namespaced object named by a DNS-1123 subdomain (all three kinds). */
export function metadataCauses(metadata: Json): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = typeof metadata.name === "string" ? metadata.name : "";
  if (name === "") causes.push({ reason: "FieldValueRequired", message: "Required value: name or generateName is required", field: "metadata.name" });
  else if (name.length > 253) causes.push(invalid("metadata.name", name, "must be no more than 253 characters"));
  else if (!DNS1123_SUBDOMAIN.test(name)) causes.push(invalid("metadata.name", name, SUBDOMAIN_MESSAGE));
  causes.push(...labelCauses(metadata.labels as Record<string, string> | undefined));
  const tooLong = checkAnnotationsSize((metadata.annotations ?? {}) as Record<string, string>);
  if (tooLong) causes.push({ reason: "FieldValueTooLong", message: tooLong, field: "metadata.annotations" });
  return causes;
}

/** The decoded size of a map of base64 values (binaryData, a Secret's data). */
function base64Bytes(values: Record<string, string>): number {
  let total = 0;
  for (const value of Object.values(values)) total += Buffer.byteLength(value, "base64");
  return total;
}

function keyCauses(field: string, values: Record<string, unknown>): StatusCause[] {
  return Object.keys(values).flatMap((key) => configKeyProblems(key).map((problem) => invalid(`${field}[${key}]`, key, problem)));
}

function tooLong(field: string): StatusCause {
  return { reason: "FieldValueTooLong", message: `Too long: may not be more than ${MAX_DATA_BYTES} bytes`, field };
}

export function configMapCauses(configMap: Json): StatusCause[] {
  const data = (configMap.data ?? {}) as Record<string, string>;
  const binaryData = (configMap.binaryData ?? {}) as Record<string, string>;
  const causes = [...metadataCauses((configMap.metadata ?? {}) as Json), ...keyCauses("data", data)];
  for (const key of Object.keys(data)) if (key in binaryData) causes.push(invalid(`data[${key}]`, key, "duplicate of key present in binaryData"));
  causes.push(...keyCauses("binaryData", binaryData));
  let size = base64Bytes(binaryData);
  for (const value of Object.values(data)) size += Buffer.byteLength(value, "utf8");
  if (size > MAX_DATA_BYTES) causes.push(tooLong(""));
  return causes;
}

export function secretCauses(secret: Json): StatusCause[] {
  const metadata = (secret.metadata ?? {}) as Json;
  const data = (secret.data ?? {}) as Record<string, string>;
  const causes = [...metadataCauses(metadata), ...keyCauses("data", data)];
  if (base64Bytes(data) > MAX_DATA_BYTES) causes.push(tooLong("data"));
  const has = (key: string) => key in data;
  const bytes = (key: string) => Buffer.from(data[key] ?? "", "base64");
  const jsonObject = (key: string) => {
    try {
      const parsed: unknown = JSON.parse(bytes(key).toString("utf8"));
      return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? undefined : "json: cannot unmarshal into a map";
    } catch (error) {
      return (error as Error).message;
    }
  };
  switch (secret.type) {
    case SECRET_TYPES.serviceAccountToken: {
      const annotations = (metadata.annotations ?? {}) as Record<string, string>;
      if (!annotations["kubernetes.io/service-account.name"]) causes.push(required("metadata.annotations[kubernetes.io/service-account.name]"));
      break;
    }
    case SECRET_TYPES.dockercfg:
    case SECRET_TYPES.dockerConfigJson: {
      const key = secret.type === SECRET_TYPES.dockercfg ? ".dockercfg" : ".dockerconfigjson";
      if (!has(key)) causes.push(required(`data[${key}]`));
      else {
        const problem = jsonObject(key);
        if (problem) causes.push(invalid(`data[${key}]`, "<secret contents redacted>", problem));
      }
      break;
    }
    case SECRET_TYPES.basicAuth:
      if (!has("username") && !has("password")) causes.push(required("data[username]"), required("data[password]"));
      break;
    case SECRET_TYPES.sshAuth:
      if (bytes("ssh-privatekey").length === 0) causes.push(required("data[ssh-privatekey]"));
      break;
    case SECRET_TYPES.tls:
      if (!has("tls.crt")) causes.push(required("data[tls.crt]"));
      if (!has("tls.key")) causes.push(required("data[tls.key]"));
      break;
  }
  return causes;
}

export function serviceAccountCauses(serviceAccount: Json): StatusCause[] {
  return metadataCauses((serviceAccount.metadata ?? {}) as Json);
}

/** What `immutable: true` on the stored object forbids of an update (the object's data fields), and a Secret's type. */
export function immutableCauses(before: Json, after: Json, dataFields: readonly string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  if (before.immutable === true) {
    if (after.immutable !== true) causes.push(forbidden("immutable", "field is immutable when `immutable` is set"));
    for (const field of dataFields) {
      if (!sameMap(before[field], after[field])) causes.push(forbidden(field, "field is immutable when `immutable` is set"));
    }
  }
  return causes;
}

/** A Secret's type never changes (ValidateImmutableField). */
export function secretTypeCauses(before: Json, after: Json): StatusCause[] {
  if (before.type === after.type) return [];
  return [{ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(after.type)}: field is immutable`, field: "type" }];
}

/** Two maps of strings with the same entries (absent and empty alike, as reflect.DeepEqual of decoded nil and empty maps is not, but both serialize as absent). */
function sameMap(a: unknown, b: unknown): boolean {
  const left = Object.entries((a ?? {}) as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1));
  const right = Object.entries((b ?? {}) as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1));
  return JSON.stringify(left) === JSON.stringify(right);
}
