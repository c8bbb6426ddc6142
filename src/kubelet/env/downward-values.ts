/**
 * The values the downward API hands a container, as the kubelet computes them: env's `fieldRef`
 * (podFieldSelectorRuntimeValue, then fieldpath.ExtractFieldPathAsString) and `resourceFieldRef`
 * (ExtractResourceValueByContainerNameAndNodeAllocatable: a limit the container does not set is the
 * node's allocatable, and the value is divided by the divisor and rounded up), and the files of a
 * downwardAPI volume (pkg/volume/downwardapi CollectData). Pure: the pod IP and allocatable are given.
 */
import type { NodeAllocatable } from "../../eviction/node-allocatable.ts";
import { parseQuantity, quantityFromValue } from "../../manifest/quantity.ts";
import type { ContainerSpec, DownwardAPIFile, EnvVar, PodSpec, ResourceFieldSelector, Volume } from "../../manifest/types.ts";
import { splitSubscript } from "../../manifest/validation/validate-downward.ts";
import { nodeNameOf } from "../../host/node-name.ts";
import { servedAnnotations } from "../../v1/pod-object.ts";

/** The node's address as pods see it: the status's hostIP, and a process runtime pod's own IP. */
export const HOST_IP = "127.0.0.1";

/** What the values depend on beyond the spec. */
export interface DownwardFacts {
  /** The sandbox's IP; absent before the sandbox exists (the env waits for it, a volume needs none). */
  podIP?: string;
  /** metadata.creationTimestamp of the pod record: config.seen among the annotations. */
  createdAt: number;
  /** The node's allocatable: the value of a limit a container does not set. */
  allocatable?: NodeAllocatable;
}

/** A downward reference the pod's containers cannot satisfy (a containerName naming no container). */
export class DownwardApiError extends Error {
  override readonly name = "DownwardApiError";
}

/** The container's env with every `valueFrom` resolved; `value` entries as written. */
export function resolveEnv(pod: PodSpec, container: ContainerSpec, facts: DownwardFacts): EnvVar[] {
  return container.env.map((env) => {
    const from = env.valueFrom;
    // ConfigMap and Secret keys are resolved against the pod's objects (object-env.ts).
    if (!from || !("fieldRef" in from || "resourceFieldRef" in from)) return env;
    const value = "fieldRef" in from ? envFieldValue(pod, from.fieldRef.fieldPath, facts) : resourceFieldValue(pod, from.resourceFieldRef, container.name, facts.allocatable);
    return { name: env.name, value };
  });
}

function envFieldValue(pod: PodSpec, fieldPath: string, facts: DownwardFacts): string {
  const podIP = facts.podIP ?? "";
  switch (fieldPath) {
    case "spec.nodeName":
      return nodeNameOf(pod.node);
    case "spec.serviceAccountName": {
      const spec = (pod.manifest.spec ?? {}) as Record<string, unknown>;
      return typeof spec.serviceAccountName === "string" ? spec.serviceAccountName : "";
    }
    case "status.hostIP":
    case "status.hostIPs":
      return HOST_IP;
    case "status.podIP":
    case "status.podIPs":
      // One address per pod here, so the comma-joined list is that one.
      return podIP;
    default:
      return objectFieldValue(pod, fieldPath, facts);
  }
}

/** fieldpath.ExtractFieldPathAsString over the pod's metadata. */
function objectFieldValue(pod: PodSpec, fieldPath: string, facts: DownwardFacts): string {
  const { path, subscript } = splitSubscript(fieldPath);
  const annotations = servedAnnotations(pod, facts.createdAt);
  if (subscript !== undefined) {
    const map = path === "metadata.labels" ? pod.labels : annotations;
    return map[subscript] ?? "";
  }
  switch (path) {
    case "metadata.name":
      return pod.fullName;
    case "metadata.namespace":
      return pod.namespace;
    case "metadata.uid":
      return pod.uid;
    case "metadata.labels":
      return formatMap(pod.labels);
    case "metadata.annotations":
      return formatMap(annotations);
    default:
      throw new DownwardApiError(`unsupported fieldPath: ${fieldPath}`);
  }
}

/** fieldpath.FormatMap: `key="value"` lines sorted by key, no trailing newline. */
export function formatMap(map: Readonly<Record<string, string>>): string {
  return Object.keys(map)
    .sort()
    .map((key) => `${key}=${JSON.stringify(map[key])}`)
    .join("\n");
}

const MERGED_LIMITS = ["cpu", "memory", "ephemeral-storage"] as const;

/**
 * `limits.cpu` and the like of the named container (or `own`, in env), divided by the divisor and
 * rounded up: cpu in millicores (a divisor of 1m gives millicores), the rest in bytes.
 */
export function resourceFieldValue(pod: PodSpec, selector: ResourceFieldSelector, own: string, allocatable: NodeAllocatable | undefined): string {
  const name = selector.containerName || own;
  const container = [...pod.initContainers, ...pod.containers].find((c) => c.name === name);
  if (!container) throw new DownwardApiError(`container ${name} not found`);
  return containerResourceValue(container, selector, allocatable);
}

/**
 * The value of `selector.resource` for `container` (ExtractContainerResourceValue); without
 * `allocatable`, as kubectl describe computes it, a limit the container does not set is 0.
 */
export function containerResourceValue(container: ContainerSpec, selector: ResourceFieldSelector, allocatable: NodeAllocatable | undefined): string {
  const dot = selector.resource.indexOf(".");
  const kind = selector.resource.slice(0, dot);
  const resource = selector.resource.slice(dot + 1);
  const list = kind === "limits" ? container.resources?.limits : container.resources?.requests;
  const written = list?.[resource];
  let amount = written === undefined ? 0n : toUnits(resource, written);
  // MergeContainerResourceLimits: a limit not set (or zero) is what the node can give (hugepages excepted).
  if (kind === "limits" && amount === 0n && (MERGED_LIMITS as readonly string[]).includes(resource) && allocatable) {
    amount = resource === "cpu" ? allocatable.cpuMillis : resource === "memory" ? allocatable.memoryBytes : allocatable.ephemeralStorageBytes;
  }
  const divisor = toUnits(resource, selector.divisor ?? "1");
  return String(ceilDiv(amount, divisor === 0n ? 1n : divisor));
}

/** Millicores for cpu, whole units (rounded up) for the rest. */
function toUnits(resource: string, value: string): bigint {
  const quantity = value === "1" ? parseQuantity("1") : quantityFromValue(value);
  return resource === "cpu" ? quantity.milliValue() : quantity.value();
}

function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return q * b === a || a < 0n ? q : q + 1n;
}

/** One file a downwardAPI volume holds. */
export interface DownwardFile {
  path: string;
  content: string;
  mode: number;
}

/** The files of a downwardAPI volume now; a resourceFieldRef names its container. */
export function volumeFiles(pod: PodSpec, volume: Extract<Volume, { type: "downwardAPI" }>, facts: DownwardFacts): DownwardFile[] {
  // The API server lets two items name one path; the later one is what the file holds.
  const files = new Map<string, DownwardFile>();
  for (const item of volume.items as DownwardAPIFile[]) {
    const content = item.fieldRef ? objectFieldValue(pod, item.fieldRef.fieldPath, facts) : resourceFieldValue(pod, item.resourceFieldRef!, "", facts.allocatable);
    files.set(item.path, { path: item.path, content, mode: item.mode ?? volume.defaultMode });
  }
  return [...files.values()];
}
