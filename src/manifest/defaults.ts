/**
 * The API server's defaulting of a v1 Pod, applied to a decoded manifest: what a real API server
 * adds when it decodes the object, so what we serve reads as `kubectl get pod -o yaml` would.
 * It follows SetObjectDefaults_Pod (kubernetes pkg/apis/core/v1/zz_generated.defaults.go), which
 * calls the SetDefaults_* functions of pkg/apis/core/v1/defaults.go and inlines the `+default=`
 * markers of k8s.io/api core/v1 types.go.
 *
 * Go decodes into typed structs before it defaults, which fixes what "unset" means here: `null`
 * is the same as absent; a plain string or int field is defaulted at "" or 0 (its `== ""` /
 * `== 0` test), so an explicit probe `timeoutSeconds: 0` becomes 1; a pointer field (`*int32`,
 * `*string`, `*bool`) only when nil, so an explicit `terminationGracePeriodSeconds: 0` stays.
 * A value of the wrong shape would fail Go's decoding; here it is left as written, for validation
 * to report with its path.
 */
import type { PullPolicy } from "./types.ts";
import { Quantity, QuantityError, quantityFromValue } from "./quantity.ts";
import { defaultPodLevelRequests } from "./validation/validate-resources.ts";
import { aggregateRequests } from "./pod-requests.ts";

type Json = Record<string, unknown>;

/** v1.DefaultTerminationGracePeriodSeconds. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
/** v1.TerminationMessagePathDefault. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log";

/**
 * The API default: Always when the image has no tag or the tag is `latest`, else IfNotPresent
 * (a digest without a tag is IfNotPresent too).
 */
export function defaultPullPolicy(image: string): PullPolicy {
  const [named, digest] = image.split("@", 2);
  const lastSegment = (named ?? "").slice((named ?? "").lastIndexOf("/") + 1);
  const colon = lastSegment.indexOf(":");
  const tag = colon === -1 ? (digest === undefined ? "latest" : "") : lastSegment.slice(colon + 1);
  return tag === "latest" ? "Always" : "IfNotPresent";
}


interface ContainerRules {
  /** SetDefaults_Pod copies limits into requests for containers and init containers, not ephemeral ones. */
  requestsFromLimits: boolean;
  /** SetDefaults_Pod's defaultHostNetworkPorts, likewise for containers and init containers only. */
  hostNetworkPorts: boolean;
}

const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
const HOOKS = ["postStart", "preStop"] as const;
const CONTAINER_STATUSES = ["initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"] as const;
/** Every pointer field of v1.VolumeSource: SetDefaults_Volume's AllPtrFieldsNil looks at all of them. */
const VOLUME_SOURCES = [
  "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi", "glusterfs",
  "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile",
  "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume",
  "scaleIO", "storageos", "csi", "ephemeral", "image",
] as const;
/** 0644, the DefaultMode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_VOLUME_MODE = 0o644;
const NANOS_PER_MILLI = 10n ** 6n;

/**
 * `raw` with every default the API server adds when it decodes a v1 Pod, and nothing else. The
 * result is a new value (the input is never mutated), keeps the written keys where they were and
 * appends defaulted ones, is JSON-serializable when the input is, and is a fixed point: applying
 * this again changes nothing. Never throws: a part of the wrong shape (containers that are not a
 * list, a probe that is a string, a quantity that does not parse) is left as written for
 * validation to report. A value that is not a Pod object (another kind, no object) is returned
 * as a copy, untouched.
 */
export function applyPodDefaults(raw: unknown): unknown {
  const pod = copyJson(raw);
  if (!isRecord(pod) || (!isUnset(pod.kind) && pod.kind !== "Pod")) return pod;
  // No spec object is a refused pod, not an empty one: making one up would hide `spec: required`.
  const spec = record(pod, "spec");
  if (spec) defaultSpec(spec);
  const status = record(pod, "status");
  if (status) defaultStatus(status);
  return pod;
}

function defaultSpec(spec: Json): void {
  // SetDefaults_PodSpec, then SetDefaults_Pod's enableServiceLinks: appended in v1.PodSpec's field order.
  defaultString(spec, "restartPolicy", "Always");
  defaultPointer(spec, "terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
  defaultString(spec, "dnsPolicy", "ClusterFirst");
  defaultPointer(spec, "securityContext", {});
  defaultString(spec, "schedulerName", "default-scheduler");
  defaultPointer(spec, "enableServiceLinks", true);

  for (const volume of records(spec.volumes)) defaultVolume(volume);
  const hostNetwork = spec.hostNetwork === true;
  const podContainer: ContainerRules = { requestsFromLimits: true, hostNetworkPorts: hostNetwork };
  for (const container of records(spec.initContainers)) defaultContainer(container, podContainer);
  for (const container of records(spec.containers)) defaultContainer(container, podContainer);
  for (const container of records(spec.ephemeralContainers)) {
    defaultContainer(container, { requestsFromLimits: false, hostNetworkPorts: false });
  }
  defaultResourceList(spec.overhead);
  defaultPodLevelResources(spec);
}

/**
 * Pod-level spec.resources gets its requests as the API server stores them (PrepareForCreate's
 * defaults, validate-resources.ts): the pod's QoS class and its admission read them. Its hugepages
 * limits (defaultHugePagePodLimits) and the milli rounding are left as written: the generated
 * defaulter we could read predates the field.
 */
function defaultPodLevelResources(spec: Json): void {
  const resources = record(spec, "resources");
  const limits = resources && record(resources, "limits");
  if (!resources || !limits) return;
  const parsed = (list: Json | undefined) => {
    const found = new Map<string, Quantity>();
    for (const [name, value] of Object.entries(list ?? {})) {
      const served = servedQuantity(value);
      if (served !== undefined) found.set(name, quantityFromValue(served));
    }
    return found;
  };
  if (!(isUnset(resources.requests) || isRecord(resources.requests))) return;
  const requests = parsed(record(resources, "requests"));
  const written = new Set(requests.keys());
  defaultPodLevelRequests(parsed(limits), requests, aggregateRequests(records(spec.containers), records(spec.initContainers)));
  const added = [...requests].filter(([name]) => !written.has(name));
  if (added.length === 0) return;
  const served = record(resources, "requests") ?? {};
  for (const [name, quantity] of added) put(served, name, quantity.toString());
  put(resources, "requests", served);
}

function defaultContainer(container: Json, rules: ContainerRules): void {
  for (const port of records(container.ports)) {
    // With the host's network a container port is bound on the host at the same number.
    if (rules.hostNetworkPorts && isUnsetOrZero(port.hostPort) && isNonZeroInteger(port.containerPort)) {
      put(port, "hostPort", port.containerPort);
    }
    defaultString(port, "protocol", "TCP");
  }
  for (const env of records(container.env)) {
    const fieldRef = record(record(env, "valueFrom"), "fieldRef");
    if (fieldRef) defaultString(fieldRef, "apiVersion", "v1");
    const resourceFieldRef = record(record(env, "valueFrom"), "resourceFieldRef");
    if (resourceFieldRef) defaultDivisor(resourceFieldRef);
  }
  defaultResources(container, rules.requestsFromLimits);
  for (const key of PROBES) {
    const probe = record(container, key);
    if (probe) defaultProbe(probe);
  }
  const lifecycle = record(container, "lifecycle");
  for (const hook of HOOKS) {
    const httpGet = record(record(lifecycle, hook), "httpGet");
    if (httpGet) defaultHttpGet(httpGet);
  }
  // SetDefaults_Container (SetDefaults_EphemeralContainer calls it too).
  defaultString(container, "terminationMessagePath", DEFAULT_TERMINATION_MESSAGE_PATH);
  defaultString(container, "terminationMessagePolicy", "File");
  defaultImagePullPolicy(container, "imagePullPolicy", container.image);
}

function defaultResources(container: Json, requestsFromLimits: boolean): void {
  if (isUnset(container.resources)) {
    // v1.Container.Resources is a struct, not a pointer, and encoding/json ignores omitempty on
    // structs: the API server serves `resources: {}` on every container that sets none.
    put(container, "resources", {});
    return;
  }
  const resources = record(container, "resources");
  if (!resources) return;
  defaultResourceList(resources.limits);
  defaultResourceList(resources.requests);
  if (requestsFromLimits) copyLimitsToRequests(resources);
}

/** SetDefaults_Pod: each limit without its request sets the request (limits already served). */
function copyLimitsToRequests(resources: Json): void {
  const limits = record(resources, "limits");
  if (!limits || !(isUnset(resources.requests) || isRecord(resources.requests))) return;
  const requests = record(resources, "requests") ?? {};
  let copied = false;
  for (const [name, limit] of Object.entries(limits)) {
    // A limit that does not parse is reported once by validation, not a second time as a request.
    // A null quantity counts as absent, as validate-resources.ts reads it.
    if (isUnset(limit) || servedQuantity(limit) === undefined || !isUnset(own(requests, name))) continue;
    put(requests, name, limit);
    copied = true;
  }
  if (copied && requests !== resources.requests) put(resources, "requests", requests);
}

/** SetDefaults_ResourceList: each quantity rounded up to a whole milli-unit, in its served form. */
function defaultResourceList(list: unknown): void {
  if (!isRecord(list)) return;
  for (const [name, value] of Object.entries(list)) {
    const served = isUnset(value) ? undefined : servedQuantity(value);
    if (served !== undefined) put(list, name, served);
  }
}

/**
 * The string the API server stores for a quantity after Quantity.RoundUp(-3), or undefined when
 * it does not parse. RoundUp rounds away from zero and keeps the format; the written string
 * survives only when already exact at milli scale, which quantity.ts's toString() decides.
 */
function servedQuantity(value: unknown): string | undefined {
  // JSON gives a quantity as a string or a number; anything else is a wrong shape, not parsed.
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  let quantity: Quantity;
  try {
    quantity = quantityFromValue(value);
  } catch (error) {
    if (error instanceof QuantityError) return undefined;
    throw error;
  }
  const remainder = quantity.nanos % NANOS_PER_MILLI;
  if (remainder === 0n) return quantity.toString();
  const step = quantity.nanos < 0n ? -NANOS_PER_MILLI : NANOS_PER_MILLI;
  return new Quantity(quantity.nanos - remainder + step, quantity.format).toString();
}

/** Not a default: a Quantity is stored parsed and served canonical (`1024Ki` reads back `1Mi`). */
function canonicalSizeLimit(emptyDir: Json | undefined): void {
  const value = emptyDir?.sizeLimit;
  if (isUnset(value) || (typeof value !== "string" && typeof value !== "number")) return;
  try {
    put(emptyDir!, "sizeLimit", quantityFromValue(value).toString());
  } catch (error) {
    if (!(error instanceof QuantityError)) throw error;
  }
}

function defaultProbe(probe: Json): void {
  // SetDefaults_Probe, then the handler's defaults from the generated defaulter.
  defaultInt(probe, "timeoutSeconds", 1);
  defaultInt(probe, "periodSeconds", 10);
  defaultInt(probe, "successThreshold", 1);
  defaultInt(probe, "failureThreshold", 3);
  const httpGet = record(probe, "httpGet");
  if (httpGet) defaultHttpGet(httpGet);
  const grpc = record(probe, "grpc");
  if (grpc) defaultPointer(grpc, "service", "");
}

/** SetDefaults_HTTPGetAction. */
function defaultHttpGet(httpGet: Json): void {
  defaultString(httpGet, "path", "/");
  defaultString(httpGet, "scheme", "HTTP");
}

function defaultVolume(volume: Json): void {
  // SetDefaults_Volume: a volume naming no source is an emptyDir (deprecated, still applied).
  if (VOLUME_SOURCES.every((source) => isUnset(volume[source]))) put(volume, "emptyDir", {});
  canonicalSizeLimit(record(volume, "emptyDir"));
  // Behind the ImageVolume gate in SetDefaults_Volume; applied, as the gate is on by default
  // from 1.35 (GA in 1.36). Static pods refuse image volumes either way.
  const image = record(volume, "image");
  if (image) defaultImagePullPolicy(image, "pullPolicy", image.reference);

  const hostPath = record(volume, "hostPath");
  if (hostPath) defaultPointer(hostPath, "type", ""); // SetDefaults_HostPathVolumeSource: HostPathUnset
  for (const source of ["secret", "configMap"] as const) {
    const modes = record(volume, source);
    if (modes) defaultPointer(modes, "defaultMode", DEFAULT_VOLUME_MODE);
  }
  const downwardAPI = record(volume, "downwardAPI");
  if (downwardAPI) defaultDownwardAPI(downwardAPI, true);
  const projected = record(volume, "projected");
  if (projected) {
    defaultPointer(projected, "defaultMode", DEFAULT_VOLUME_MODE);
    for (const source of records(projected.sources)) {
      const items = record(source, "downwardAPI");
      if (items) defaultDownwardAPI(items, false);
      const token = record(source, "serviceAccountToken");
      if (token) defaultPointer(token, "expirationSeconds", 3600); // SetDefaults_ServiceAccountTokenProjection
    }
  }
  defaultLegacyVolumeSources(volume);
  const claimSpec = record(record(record(volume, "ephemeral"), "volumeClaimTemplate"), "spec");
  if (claimSpec) {
    defaultPointer(claimSpec, "volumeMode", "Filesystem"); // SetDefaults_PersistentVolumeClaimSpec
    const resources = record(claimSpec, "resources");
    if (resources) {
      defaultResourceList(resources.limits);
      defaultResourceList(resources.requests);
    }
  }
}

/** SetDefaults_DownwardAPIVolumeSource (the volume only) and each item's ObjectFieldSelector. */
function defaultDownwardAPI(downwardAPI: Json, withMode: boolean): void {
  if (withMode) defaultPointer(downwardAPI, "defaultMode", DEFAULT_VOLUME_MODE);
  for (const item of records(downwardAPI.items)) {
    const fieldRef = record(item, "fieldRef");
    if (fieldRef) defaultString(fieldRef, "apiVersion", "v1");
    const resourceFieldRef = record(item, "resourceFieldRef");
    if (resourceFieldRef) defaultDivisor(resourceFieldRef);
  }
}

/**
 * ResourceFieldSelector.Divisor is a Quantity struct, not a pointer: encoding/json ignores
 * omitempty on it, so the API server serves `divisor: "0"` when none was written, and a written
 * one in its canonical form (`1024Ki` as `1Mi`).
 */
function defaultDivisor(selector: Json): void {
  if (isUnset(selector.divisor)) return put(selector, "divisor", "0");
  const served = servedQuantity(selector.divisor);
  if (served !== undefined) put(selector, "divisor", served);
}

/** The `+default=` markers of the in-tree storage sources static pods refuse, kept for fidelity. */
function defaultLegacyVolumeSources(volume: Json): void {
  const iscsi = record(volume, "iscsi");
  if (iscsi) defaultString(iscsi, "iscsiInterface", "default");
  const rbd = record(volume, "rbd");
  if (rbd) {
    defaultString(rbd, "pool", "rbd");
    defaultString(rbd, "user", "admin");
    defaultString(rbd, "keyring", "/etc/ceph/keyring");
  }
  const azureDisk = record(volume, "azureDisk");
  if (azureDisk) {
    defaultPointer(azureDisk, "cachingMode", "ReadWrite");
    defaultPointer(azureDisk, "fsType", "ext4");
    defaultPointer(azureDisk, "readOnly", false);
    defaultPointer(azureDisk, "kind", "Shared");
  }
  const scaleIO = record(volume, "scaleIO");
  if (scaleIO) {
    defaultString(scaleIO, "storageMode", "ThinProvisioned");
    defaultString(scaleIO, "fsType", "xfs");
  }
}

/** The generated defaulter rounds the quantities a status reports, as it does the spec's. */
function defaultStatus(status: Json): void {
  for (const key of CONTAINER_STATUSES) {
    for (const containerStatus of records(status[key])) {
      defaultResourceList(containerStatus.allocatedResources);
      const resources = record(containerStatus, "resources");
      if (resources) {
        defaultResourceList(resources.limits);
        defaultResourceList(resources.requests);
      }
    }
  }
}

/**
 * SetDefaults_Container and SetDefaults_Volume: Always for a `latest` or missing tag, else
 * IfNotPresent. An empty reference fails ParseImageName, whose tag is then "": IfNotPresent.
 */
function defaultImagePullPolicy(obj: Json, key: string, image: unknown): void {
  if (!isUnset(obj[key]) && obj[key] !== "") return;
  if (isUnset(image) || image === "") put(obj, key, "IfNotPresent");
  else if (typeof image === "string") put(obj, key, defaultPullPolicy(image));
}

/** Pointer fields: defaulted only when nil, so an explicit zero stays. */
function defaultPointer(obj: Json, key: string, value: unknown): void {
  if (isUnset(obj[key])) put(obj, key, value);
}

/** String fields: Go's `== ""` holds for absent, null and "". */
function defaultString(obj: Json, key: string, value: string): void {
  if (isUnset(obj[key]) || obj[key] === "") put(obj, key, value);
}

/** Int fields: Go's `== 0` holds for absent, null and 0. */
function defaultInt(obj: Json, key: string, value: number): void {
  if (isUnsetOrZero(obj[key])) put(obj, key, value);
}

/**
 * Sets an own property: in place when the key exists (its position kept), appended otherwise.
 * defineProperty, not assignment, so a key named `__proto__` stays data.
 */
function put(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function own(obj: Json, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** What Go decodes as nil: absent or null. */
function isUnset(value: unknown): boolean {
  return value === undefined || value === null;
}

function isUnsetOrZero(value: unknown): boolean {
  return isUnset(value) || value === 0;
}

function isNonZeroInteger(value: unknown): value is number {
  return Number.isInteger(value) && value !== 0;
}

/** Only objects as a decoder makes them: a Date or Map is a value of the wrong shape. */
function isRecord(value: unknown): value is Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function record(obj: Json | undefined, key: string): Json | undefined {
  const value = obj && own(obj, key);
  return isRecord(value) ? value : undefined;
}

/** The object items of a list; anything else (a list that is not one, a string item) is skipped. */
function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/**
 * A deep copy of lists and records, shared (YAML alias) and cyclic parts kept so. Iterative: a
 * decoder accepts nesting far deeper than the call stack allows.
 */
function copyJson(root: unknown): unknown {
  const copies = new Map<object, Json | unknown[]>();
  const pending: [source: object, target: Json | unknown[]][] = [];
  const copyOf = (value: unknown): unknown => {
    if (typeof value !== "object" || value === null) return value;
    const known = copies.get(value);
    if (known) return known;
    const target = Array.isArray(value) ? [] : isRecord(value) ? {} : undefined;
    if (!target) return value;
    copies.set(value, target);
    pending.push([value, target]);
    return target;
  };
  const copy = copyOf(root);
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [source, target] = next;
    if (Array.isArray(target)) for (const item of source as unknown[]) target.push(copyOf(item));
    else for (const [key, child] of Object.entries(source)) put(target, key, copyOf(child));
  }
  return copy;
}
