/**
 * The pod's QoS class by the API's rules (pkg/apis/core/v1/helper/qos, ComputePodQOS, which the
 * kubelet's GetPodQOS reads): only cpu and memory count, over app and init containers alike
 * (sidecars are init containers); zero counts as unset.
 */
import { isPlainObject } from "./fields.ts";
import { Quantity, QuantityError, quantityFromValue } from "./quantity.ts";

export type QosClass = "Guaranteed" | "Burstable" | "BestEffort";

/** Resources as validated (strings) or as written in a manifest (strings or numbers). */
export interface ResourcesLike {
  limits?: Readonly<Record<string, unknown>>;
  requests?: Readonly<Record<string, unknown>>;
}

/** The resources the class is computed from (also the ones hugepages need beside them). */
export const QOS_RESOURCES: readonly string[] = ["cpu", "memory"];

/**
 * Guaranteed when every container limits both cpu and memory and the pod's summed requests equal
 * its summed limits; BestEffort when nothing requests or limits cpu or memory; else Burstable.
 * Requests default to limits first, as the API server defaults them before anyone reads the class.
 * A pod with pod-level resources (`podLevel`, any set) is classed by those alone, as one container
 * would be (PodLevelResourcesFixKubeletQOSClass, on in 1.37).
 */
export function podQosClass(containers: readonly { resources?: ResourcesLike | undefined }[], podLevel?: ResourcesLike): QosClass {
  if (podLevel && [podLevel.limits, podLevel.requests].some((list) => isPlainObject(list) && Object.keys(list).length > 0)) return podQosClass([{ resources: podLevel }]);
  const requests = new Map<string, Quantity>();
  const limits = new Map<string, Quantity>();
  let guaranteed = true;
  for (const container of containers) {
    const containerLimits = positiveQosQuantities(container.resources?.limits);
    const containerRequests = positiveQosQuantities({ ...container.resources?.limits, ...container.resources?.requests });
    for (const [name, quantity] of containerRequests) requests.set(name, add(requests.get(name), quantity));
    for (const [name, quantity] of containerLimits) limits.set(name, add(limits.get(name), quantity));
    if (!QOS_RESOURCES.every((name) => containerLimits.has(name))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return "BestEffort";
  if (guaranteed) {
    for (const [name, request] of requests) {
      const limit = limits.get(name);
      if (!limit || limit.cmp(request) !== 0) guaranteed = false;
    }
  }
  return guaranteed && requests.size === limits.size ? "Guaranteed" : "Burstable";
}

/** The class of a pod object as written (a pod the API accepted, before the loop validated it again). */
export function manifestQosClass(pod: unknown): QosClass {
  const spec = isPlainObject(pod) && isPlainObject(pod.spec) ? pod.spec : {};
  const containers = [spec.initContainers, spec.containers].flatMap((list) => (Array.isArray(list) ? list.filter(isPlainObject) : []));
  return podQosClass(
    containers.map((container) => ({ resources: isPlainObject(container.resources) ? container.resources : undefined })),
    isPlainObject(spec.resources) ? spec.resources : undefined,
  );
}

function positiveQosQuantities(list: unknown): Map<string, Quantity> {
  const found = new Map<string, Quantity>();
  for (const name of QOS_RESOURCES) {
    const quantity = isPlainObject(list) ? quantityOrUndefined(list[name]) : undefined;
    if (quantity && quantity.sign() > 0) found.set(name, quantity);
  }
  return found;
}

/** A value that is not a quantity was refused by validation; here it simply does not count. */
function quantityOrUndefined(value: unknown): Quantity | undefined {
  if (value === undefined || value === null) return undefined;
  try {
    return quantityFromValue(value);
  } catch (error) {
    if (error instanceof QuantityError) return undefined;
    throw error;
  }
}

function add(sum: Quantity | undefined, quantity: Quantity): Quantity {
  return sum ? sum.add(quantity) : quantity;
}
