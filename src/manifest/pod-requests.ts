/**
 * What a pod's containers request together, by resource (component-helpers' resource
 * AggregateContainerRequests, which the kubelet's admission and the API server's pod-level checks
 * read): app containers and sidecars run together; each init container runs beside the sidecars
 * declared before it; the pod needs the larger of the two.
 */
import { Quantity, QuantityError, quantityFromValue } from "./quantity.ts";

/** A container as far as its requests go: validated, or as written (quantities that do not parse are left out). */
export interface Requesting {
  restartPolicy?: unknown;
  resources?: { requests?: Readonly<Record<string, unknown>> | undefined } | undefined;
}

/** What the containers request together, by resource name. */
export function aggregateRequests(containers: readonly Requesting[], initContainers: readonly Requesting[]): Map<string, Quantity> {
  const requests = (container: Requesting): Map<string, Quantity> => {
    const found = new Map<string, Quantity>();
    for (const [name, value] of Object.entries(container.resources?.requests ?? {})) {
      try {
        found.set(name, quantityFromValue(value));
      } catch (error) {
        if (!(error instanceof QuantityError)) throw error;
      }
    }
    return found;
  };
  const total = new Map<string, Quantity>();
  for (const container of containers) addInto(total, requests(container));
  const sidecars = new Map<string, Quantity>();
  const initPeak = new Map<string, Quantity>();
  for (const container of initContainers) {
    if (container.restartPolicy === "Always") {
      addInto(total, requests(container));
      addInto(sidecars, requests(container));
      maxInto(initPeak, sidecars);
    } else {
      const beside = new Map(sidecars);
      addInto(beside, requests(container));
      maxInto(initPeak, beside);
    }
  }
  maxInto(total, initPeak);
  return total;
}

function addInto(into: Map<string, Quantity>, more: ReadonlyMap<string, Quantity>): void {
  for (const [name, quantity] of more) into.set(name, into.get(name)?.add(quantity) ?? quantity);
}

function maxInto(into: Map<string, Quantity>, other: ReadonlyMap<string, Quantity>): void {
  for (const [name, quantity] of other) if (!into.has(name) || quantity.cmp(into.get(name)!) > 0) into.set(name, quantity);
}
