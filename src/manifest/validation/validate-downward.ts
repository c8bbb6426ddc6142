/**
 * The downward API as the API server validates it (pkg/apis/core/validation: validateEnvVarValueFrom,
 * validateObjectFieldSelector, validateContainerResourceFieldSelector, validateDownwardAPIVolumeSource),
 * in its words and paths. Static pods may use it: only the ConfigMap and Secret sources are refused,
 * since a static pod can reference no other API object. Messages of Invalid errors carry the value
 * first (`"foo": ...`) so the API's `Invalid value: "foo": ...` reads as the API server's.
 */
import { CREATE_THROUGH_THE_API } from "./api-object-reference.ts";
import type { DownwardAPIFile, EnvVarSource, ObjectFieldSelector, ObjectKeySelector, ResourceFieldSelector, Volume } from "../types.ts";
import { Fields } from "../fields.ts";
import { checkQualifiedName } from "../names.ts";
import { QuantityError, quantityFromValue } from "../quantity.ts";

/** validEnvDownwardAPIFieldPathExpressions. */
export const ENV_FIELD_PATHS = [
  "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
  "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
] as const;
/** validVolumeDownwardAPIFieldPathExpressions (labels and annotations whole, as `key="value"` lines). */
export const VOLUME_FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid"] as const;
/** validContainerResourceFieldPathExpressions. */
export const RESOURCE_FIELDS = ["limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage"] as const;
const HUGEPAGES_PREFIXES = ["requests.hugepages-", "limits.hugepages-"];
/** What ConvertDownwardAPIFieldLabel accepts for a v1 pod (before the env or volume list narrows it). */
const CONVERTIBLE_FIELD_LABELS = new Set([
  "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
  "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs",
  "status.podIP", "status.podIPs",
]);
const BYTE_DIVISORS = ["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"];
const FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive";

/** `metadata.labels['app']` -> path and subscript (fieldpath.SplitMaybeSubscriptedPath). */
export function splitSubscript(fieldPath: string): { path: string; subscript?: string } {
  const match = /^(.*)\['(.*)'\]$/.exec(fieldPath);
  return match ? { path: match[1]!, subscript: match[2]! } : { path: fieldPath };
}

/** Go's sets.List rendering in a NotSupported error: `supported values: "a", "b"`, sorted. */
function unsupported(value: string, allowed: readonly string[]): string {
  return `Unsupported value: ${JSON.stringify(value)}: supported values: ${[...allowed].sort().map((v) => JSON.stringify(v)).join(", ")}`;
}

/** `env[i].valueFrom`: exactly one source, fieldRef or resourceFieldRef; the ConfigMap and Secret ones refused. */
export function readEnvVarSource(item: Fields, value: string, apiObjects = false): EnvVarSource | undefined {
  const from = item.object("valueFrom");
  if (!from) return undefined;
  let count = 0;
  let source: EnvVarSource | undefined;
  const fieldRef = from.object("fieldRef");
  if (fieldRef) {
    count++;
    const selector = readObjectFieldSelector(fieldRef, ENV_FIELD_PATHS);
    if (selector) source = { fieldRef: selector };
  }
  const resourceFieldRef = from.object("resourceFieldRef");
  if (resourceFieldRef) {
    count++;
    const selector = readResourceFieldSelector(resourceFieldRef, false);
    if (selector) source = { resourceFieldRef: selector };
  }
  for (const key of ["configMapKeyRef", "secretKeyRef"] as const) {
    if (!from.has(key)) continue;
    count++;
    const ref = apiObjects ? from.object(key) : undefined;
    if (ref) {
      const selector = readObjectKeySelector(ref);
      if (selector) source = key === "configMapKeyRef" ? { configMapKeyRef: selector } : { secretKeyRef: selector };
      continue;
    }
    if (!apiObjects) from.fail(key, `Forbidden: static pods cannot reference ConfigMaps or Secrets: use value, fieldRef or resourceFieldRef, or ${CREATE_THROUGH_THE_API}`);
  }
  if (from.has("fileKeyRef")) {
    // Kubernetes 1.34+ (EnvFiles, beta and on since 1.35) reads it from a file an init container wrote in an emptyDir.
    count++;
    from.fail("fileKeyRef", "not supported by this agent: a variable read from a file in an emptyDir volume (EnvFiles, Kubernetes 1.34+) is not implemented; use value, fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef");
  }
  if (count === 0) from.fail(undefined, '"": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`');
  else if (value !== "") from.fail(undefined, '"": may not be specified when `value` is not empty');
  else if (count > 1) from.fail(undefined, '"": may not have more than one field specified at a time');
  return count === 1 ? source : undefined;
}

/** `configMapKeyRef` / `secretKeyRef` (a pod of the cluster only). */
export function readObjectKeySelector(fields: Fields): ObjectKeySelector | undefined {
  const name = fields.requiredString("name");
  const key = fields.requiredString("key");
  const optional = fields.bool("optional", false);
  return name === "" || key === "" ? undefined : { name, key, optional };
}

function readObjectFieldSelector(fields: Fields, allowed: readonly string[]): ObjectFieldSelector | undefined {
  // apiVersion is defaulted to v1 before validation (SetDefaults_ObjectFieldSelector): absent only if written "".
  const apiVersion = fields.string("apiVersion") ?? "";
  if (apiVersion === "") return void fields.fail("apiVersion", "required");
  const fieldPath = fields.string("fieldPath") ?? "";
  if (fieldPath === "") return void fields.fail("fieldPath", "required");
  const converted = convertFieldLabel(apiVersion, fieldPath);
  if (typeof converted !== "string") return void fields.fail("fieldPath", `${JSON.stringify(fieldPath)}: error converting fieldPath: ${converted.error}`);
  const { path, subscript } = splitSubscript(converted);
  if (subscript !== undefined) {
    // The API server checks the key as a qualified name (annotations lower-cased), on the selector itself.
    const key = path === "metadata.annotations" ? subscript.toLowerCase() : subscript;
    const problem = checkQualifiedName(key);
    if (problem) return void fields.fail(undefined, `${JSON.stringify(key)}: ${problem}`);
  } else if (!allowed.includes(path)) {
    return void fields.fail("fieldPath", unsupported(path, allowed));
  }
  return { apiVersion, fieldPath: converted };
}

/** ConvertDownwardAPIFieldLabel: the v1 labels a pod field selector may name (`spec.host` is the old `spec.nodeName`). */
function convertFieldLabel(apiVersion: string, label: string): string | { error: string } {
  if (apiVersion !== "v1") return { error: `unsupported pod version: ${apiVersion}` };
  const { path, subscript } = splitSubscript(label);
  if (subscript !== undefined) {
    return path === "metadata.annotations" || path === "metadata.labels" ? label : { error: `field label does not support subscript: ${label}` };
  }
  if (label === "spec.host") return "spec.nodeName";
  return CONVERTIBLE_FIELD_LABELS.has(label) ? label : { error: `field label not supported: ${label}` };
}

function readResourceFieldSelector(fields: Fields, volume: boolean): ResourceFieldSelector | undefined {
  const containerName = fields.string("containerName") ?? "";
  const resource = fields.string("resource") ?? "";
  let ok = true;
  if (volume && containerName === "") {
    fields.fail("containerName", "required");
    ok = false;
  } else if (resource === "") {
    fields.fail("resource", "required");
    ok = false;
  } else if (!(RESOURCE_FIELDS as readonly string[]).includes(resource) && !HUGEPAGES_PREFIXES.some((prefix) => resource.startsWith(prefix))) {
    fields.fail("resource", unsupported(resource, RESOURCE_FIELDS));
    ok = false;
  }
  const divisor = readDivisor(fields, resource);
  if (divisor === null) ok = false;
  if (!ok) return undefined;
  const selector: ResourceFieldSelector = { resource };
  if (containerName !== "") selector.containerName = containerName;
  if (divisor) selector.divisor = divisor;
  return selector;
}

/** The divisor in its canonical form, undefined when unset (or zero, which means 1), null when refused. */
function readDivisor(fields: Fields, resource: string): string | undefined | null {
  if (!fields.has("divisor")) return undefined;
  let canonical: string;
  try {
    const quantity = quantityFromValue(fields.raw("divisor"));
    if (quantity.sign() === 0) return undefined;
    canonical = quantity.toString();
  } catch (error) {
    if (!(error instanceof QuantityError)) throw error;
    fields.issues.addUndecodable(fields.at("divisor"), error.message);
    return null;
  }
  const allowed = divisorsFor(resource);
  if (allowed && !allowed.values.includes(canonical)) {
    fields.fail("divisor", `${JSON.stringify(resource)}: only divisor's values ${allowed.what}`);
    return null;
  }
  return canonical;
}

function divisorsFor(resource: string): { values: readonly string[]; what: string } | undefined {
  if (resource === "limits.cpu" || resource === "requests.cpu") return { values: ["1m", "1"], what: "1m and 1 are supported with the cpu resource" };
  const bytes = `${BYTE_DIVISORS.join(", ")} are supported with the`;
  if (resource === "limits.memory" || resource === "requests.memory") return { values: BYTE_DIVISORS, what: `${bytes} memory resource` };
  if (resource === "limits.ephemeral-storage" || resource === "requests.ephemeral-storage") return { values: BYTE_DIVISORS, what: `${bytes} local ephemeral storage resource` };
  if (HUGEPAGES_PREFIXES.some((prefix) => resource.startsWith(prefix))) return { values: BYTE_DIVISORS, what: `${bytes} hugepages resource` };
  return undefined;
}

/**
 * `volumes[i].downwardAPI`. As in the API server, an item's errors are reported on the volume
 * source's path, not the item's (validateDownwardAPIVolumeSource passes its own path down).
 */
export function readDownwardAPIVolume(name: string, source: Fields): Volume {
  const defaultMode = readMode(source, "defaultMode") ?? 0o644;
  const items: DownwardAPIFile[] = [];
  for (const item of source.objectList("items")) {
    const at = new Fields(item.obj, source.path, item.issues);
    const path = item.string("path") ?? "";
    if (path === "") at.fail("path", "required");
    for (const problem of localPathProblems(path)) at.fail("path", `${JSON.stringify(path)}: ${problem}`);
    const fieldRef = item.object("fieldRef");
    const resourceFieldRef = item.object("resourceFieldRef");
    const file: DownwardAPIFile = { path };
    if (fieldRef) {
      const selector = readObjectFieldSelector(new Fields(fieldRef.obj, [...source.path, "fieldRef"], item.issues), VOLUME_FIELD_PATHS);
      if (selector) file.fieldRef = selector;
      if (resourceFieldRef) at.fail(undefined, '"resource": fieldRef and resourceFieldRef can not be specified simultaneously');
    } else if (resourceFieldRef) {
      const selector = readResourceFieldSelector(new Fields(resourceFieldRef.obj, [...source.path, "resourceFieldRef"], item.issues), true);
      if (selector) file.resourceFieldRef = selector;
    } else {
      at.fail(undefined, "required: one of fieldRef and resourceFieldRef is required");
    }
    const mode = readMode(item, "mode", at);
    if (mode !== undefined) file.mode = mode;
    if (path !== "" && (file.fieldRef || file.resourceFieldRef)) items.push(file);
  }
  return { name, type: "downwardAPI", defaultMode, items };
}

export function readMode(fields: Fields, key: string, report: Fields = fields): number | undefined {
  if (!fields.has(key)) return undefined;
  const mode = fields.raw(key);
  if (typeof mode !== "number" || !Number.isInteger(mode)) {
    report.fail(key, `must be an integer (found ${typeof mode === "string" ? JSON.stringify(mode) : String(mode)})`);
    return undefined;
  }
  if (mode < 0 || mode > 0o777) {
    report.fail(key, `${mode}: ${FILE_MODE_ERROR}`);
    return undefined;
  }
  return mode;
}

/** ValidateLocalNonReservedPath: relative, no `..` element, not starting with `..` (the writer's own names). */
export function localPathProblems(path: string): string[] {
  const problems: string[] = [];
  if (path.startsWith("/")) problems.push("must be a relative path");
  if (path.split("/").includes("..")) problems.push("must not contain '..'");
  else if (path.startsWith("..")) problems.push("must not start with '..'");
  return problems;
}
