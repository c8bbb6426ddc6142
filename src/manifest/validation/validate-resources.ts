/**
 * A container's `resources` as the API server takes them (pkg/apis/core/validation,
 * ValidateContainerResourceRequirements, after SetDefaults_Pod): quantities parsed, only container
 * resource names, nothing negative, a request within its limit. Messages carry the value first
 * (`"600m": must be ...`) so the API's `Invalid value: "600m": must be ...` reads as the API server's.
 */
import { mapKey, type FieldPath } from "../errors.ts";
import type { Fields } from "../fields.ts";
import { QOS_RESOURCES } from "../qos.ts";
import { parseQuantity, Quantity, QuantityError, quantityFromValue } from "../quantity.ts";
import type { ContainerSpec, ResourceList, ResourceRequirements } from "../types.ts";
import { aggregateRequests } from "../pod-requests.ts";

/** The resources minikubelet knows by name; `hugepages-<size>` is the fourth, by prefix. */
const STANDARD_CONTAINER_RESOURCES = ["cpu", "memory", "ephemeral-storage"] as const;
const HUGEPAGES_PREFIX = "hugepages-";
const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Quantities = Map<string, Quantity>;

/** Reads and checks a container's `resources`; undefined when it sets none. */
export function validateResources(container: Fields): ResourceRequirements | undefined {
  const fields = container.object("resources");
  if (!fields) return undefined;
  return readRequirements(fields, checkName, (limits, requests) => {
    // SetDefaults_Pod runs before validation: a limit without its request sets the request.
    for (const [name, limit] of limits) if (!requests.has(name)) requests.set(name, limit);
  });
}

/** The names pod-level resources may hold (the resource helper's SupportedPodLevelResources), sorted as NotSupported lists them. */
const POD_LEVEL_RESOURCES = ["cpu", HUGEPAGES_PREFIX, "memory"] as const;
/** Names the API knows without a domain (core helper's standardResources), beside the hugepages prefixes. */
const STANDARD_RESOURCES: ReadonlySet<string> = new Set([
  "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu",
  "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
  "configmaps", "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports", "services.loadbalancers",
]);

/**
 * The pod's own `resources` (pod-level resources, validatePodResources): cpu, memory and hugepages
 * only, checked as a container's are, then against its containers': no smaller than what they
 * request together (app containers and sidecars at once, each init container beside the sidecars
 * before it), no container limit above the pod's. Not on a Windows pod, and no claims.
 */
export function validatePodResources(spec: Fields, containers: readonly ContainerSpec[], initContainers: readonly ContainerSpec[], isWindows: boolean): ResourceRequirements | undefined {
  const fields = spec.object("resources");
  if (!fields) return undefined;
  if (isWindows) {
    spec.fail("resources", "Forbidden: may not be set for a windows pod");
    return undefined;
  }
  if (fields.has("claims")) fields.fail("claims", "Forbidden: claims may not be set for Resources at pod-level");
  const aggregate = aggregateRequests(containers, initContainers);
  const pod = readRequirements(fields, checkPodResourceName, (limits, requests) => defaultPodLevelRequests(limits, requests, aggregate));
  if (!pod) return undefined;
  for (const [name, request] of Object.entries(pod.requests ?? {})) {
    const containersNeed = aggregate.get(name);
    if (containersNeed && containersNeed.cmp(parseQuantity(request)) > 0) {
      fields.issues.add([...fields.at("requests"), mapKey(name)], `"${request}": must be greater than or equal to aggregate container requests of ${containersNeed}`);
    }
  }
  containers.forEach((container, index) => {
    for (const [name, limit] of Object.entries(container.resources?.limits ?? {})) {
      const podLimit = pod.limits?.[name];
      // The API server's own path for this one: resources.containers[i][name].limits.
      if (podLimit !== undefined && parseQuantity(limit).cmp(parseQuantity(podLimit)) > 0) {
        fields.issues.add([...fields.path, "containers", index, mapKey(name), "limits"], `"${limit}": must be less than or equal to pod limits of ${podLimit}`);
      }
    }
  });
  return pod;
}

/**
 * PrepareForCreate's pod-level request defaults (PodLevelResourcesFixDefaulting, on in 1.37), only
 * once some pod-level limit is set: an unset request of cpu, memory or hugepages is what the
 * containers request together (for what may be overcommitted), else the pod's limit.
 */
export function defaultPodLevelRequests(limits: ReadonlyMap<string, Quantity>, requests: Map<string, Quantity>, aggregate: ReadonlyMap<string, Quantity>): void {
  if (limits.size === 0) return;
  for (const [name, need] of aggregate) if (!requests.has(name) && isPodLevelResource(name) && isOvercommitAllowed(name)) requests.set(name, need);
  for (const [name, limit] of limits) if (!requests.has(name) && isPodLevelResource(name)) requests.set(name, limit);
}

/** The resource helper's IsSupportedPodLevelResource. */
function isPodLevelResource(name: string): boolean {
  return name === "cpu" || name === "memory" || isHugePages(name);
}

function checkPodResourceName(fields: Fields, at: FieldPath, name: string): void {
  if (!name.includes("/") && !STANDARD_RESOURCES.has(name) && !isHugePages(name) && !name.startsWith(`requests.${HUGEPAGES_PREFIX}`)) {
    fields.issues.add(at, `"${name}": must be a standard resource type or fully qualified`);
  } else if (!isPodLevelResource(name)) {
    fields.issues.add(at, `Unsupported value: ${JSON.stringify(name)}: supported values: ${POD_LEVEL_RESOURCES.map((value) => JSON.stringify(value)).join(", ")}`);
  }
}

function readRequirements(
  fields: Fields,
  checkName: (fields: Fields, at: FieldPath, name: string) => void,
  defaultRequests: (limits: Quantities, requests: Quantities) => void,
): ResourceRequirements | undefined {
  const limits = readQuantities(fields, "limits");
  const requests = readQuantities(fields, "requests");
  defaultRequests(limits, requests);

  let qosResourceSet = false;
  let hugePagesSet = false;
  for (const name of sorted(limits)) {
    const limit = limits.get(name)!;
    const at = [...fields.at("limits"), mapKey(name)];
    checkName(fields, at, name);
    checkValue(fields, at, name, limit);
    qosResourceSet ||= QOS_RESOURCES.includes(name);
    hugePagesSet ||= isHugePages(name);
  }
  for (const name of sorted(requests)) {
    const request = requests.get(name)!;
    const at = [...fields.at("requests"), mapKey(name)];
    checkName(fields, at, name);
    checkValue(fields, at, name, request);
    const limit = limits.get(name);
    if (limit && request.cmp(limit) !== 0 && !isOvercommitAllowed(name)) {
      fields.fail("requests", `"${request}": must be equal to ${name} limit of ${limit}`);
    } else if (limit && request.cmp(limit) > 0) {
      fields.fail("requests", `"${request}": must be less than or equal to ${name} limit of ${limit}`);
    } else if (!limit && !isOvercommitAllowed(name)) {
      fields.fail("limits", "required: Limit must be set for non overcommitable resources");
    }
    qosResourceSet ||= QOS_RESOURCES.includes(name);
    hugePagesSet ||= isHugePages(name);
  }
  if (hugePagesSet && !qosResourceSet) fields.fail(undefined, "Forbidden: HugePages require cpu or memory");
  if (limits.size === 0 && requests.size === 0) return undefined;
  return { limits: served(limits), requests: served(requests) };
}

/** The quantities of `limits` or `requests` that parse; each one that does not is an issue. */
function readQuantities(fields: Fields, key: "limits" | "requests"): Quantities {
  const quantities: Quantities = new Map();
  const list = fields.object(key);
  if (!list) return quantities;
  for (const [name, value] of Object.entries(list.obj)) {
    if (value === null || value === undefined) continue;
    try {
      quantities.set(name, quantityFromValue(value));
    } catch (error) {
      if (!(error instanceof QuantityError)) throw error;
      list.issues.addUndecodable(list.at(mapKey(name)), error.message);
    }
  }
  return quantities;
}

function checkName(fields: Fields, at: FieldPath, name: string): void {
  if (!name.includes("/")) {
    if (!isStandardContainerResource(name)) fields.issues.add(at, `"${name}": must be a standard resource for containers`);
  } else if (!isNative(name) && !isExtended(name)) {
    fields.issues.add(at, `"${name}": doesn't follow extended resource name standard`);
  }
}

function checkValue(fields: Fields, at: FieldPath, name: string, quantity: Quantity): void {
  if (quantity.sign() < 0) fields.issues.add(at, `"${quantity}": must be greater than or equal to 0`);
  // Extended resources (devices) are counted, never shared: whole numbers only.
  if (isExtended(name) && quantity.milliValue() % 1000n !== 0n) fields.issues.add(at, `"${quantity}": must be an integer`);
  if (isHugePages(name) && !isWholePages(name, quantity)) fields.issues.add(at, `"${quantity}": ${quantity} is not positive integer multiple of ${name}`);
}

/** A hugepages quantity is a whole number of its pages (`hugepages-2Mi: 4Mi`). */
function isWholePages(name: string, quantity: Quantity): boolean {
  let pageSize: bigint;
  try {
    pageSize = parseQuantity(name.slice(HUGEPAGES_PREFIX.length)).value();
  } catch (error) {
    if (error instanceof QuantityError) return false;
    throw error;
  }
  return pageSize > 0n && quantity.value() % pageSize === 0n;
}

function isStandardContainerResource(name: string): boolean {
  return (STANDARD_CONTAINER_RESOURCES as readonly string[]).includes(name) || isHugePages(name);
}

function isHugePages(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX);
}

/** No domain, or the kubernetes.io domain. */
function isNative(name: string): boolean {
  return !name.includes("/") || name.includes("kubernetes.io/");
}

/** `example.com/gpu`: a domain-prefixed name outside kubernetes.io, valid once quota's `requests.` prefix is added. */
function isExtended(name: string): boolean {
  if (isNative(name) || name.startsWith("requests.")) return false;
  const [prefix = "", local = "", ...rest] = `requests.${name}`.split("/");
  return rest.length === 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix) && QUALIFIED_NAME_PART.test(local);
}

/** Hugepages and extended resources are handed out whole: their request must equal their limit. */
function isOvercommitAllowed(name: string): boolean {
  return isNative(name) && !isHugePages(name);
}

function sorted(quantities: Quantities): string[] {
  return [...quantities.keys()].sort();
}

/** Keys in order (Go serialises maps sorted), each value as the API server serves it. */
function served(quantities: Quantities): ResourceList {
  const list: ResourceList = {};
  for (const name of sorted(quantities)) list[name] = quantities.get(name)!.toString();
  return list;
}
