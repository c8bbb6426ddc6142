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
import type { ResourceList, ResourceRequirements } from "../types.ts";

/** The resources minikubelet knows by name; `hugepages-<size>` is the fourth, by prefix. */
const STANDARD_CONTAINER_RESOURCES = ["cpu", "memory", "ephemeral-storage"] as const;
const HUGEPAGES_PREFIX = "hugepages-";
const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Quantities = Map<string, Quantity>;

/** Reads and checks `resources`; undefined when the container sets none. */
export function validateResources(container: Fields): ResourceRequirements | undefined {
  const fields = container.object("resources");
  if (!fields) return undefined;
  const limits = readQuantities(fields, "limits");
  const requests = readQuantities(fields, "requests");
  // SetDefaults_Pod runs before validation: a limit without its request sets the request.
  for (const [name, limit] of limits) if (!requests.has(name)) requests.set(name, limit);

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
