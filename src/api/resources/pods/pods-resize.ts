/**
 * The pods/resize subresource (`kubectl patch pod web --subresource resize`, KEP-1287): a PATCH or
 * PUT that changes nothing of the pod but its containers' resources and resizePolicy (the API
 * server's podResizeStrategy, dropNonResizeUpdates), checked as ValidatePodResize checks it: not a
 * static pod, the same QoS class, no request or limit removed, only cpu and memory changed. The
 * loop then allocates and applies the new values (kubelet/pod-resize.ts). GET serves the pod.
 */
import { podQosClass } from "../../../manifest/qos.ts";
import type { ContainerSpec, PodSpec } from "../../../manifest/types.ts";
import { isSidecar } from "../../../manifest/types.ts";
import { isObject } from "../../patch/json.ts";
import type { StatusCause } from "../../http/status.ts";
import { subresourceRoutes, type Json } from "./pod-subresource-write.ts";

/** What a resize may change of a container. */
const RESIZABLE_FIELDS = ["resources", "resizePolicy"] as const;
const RESIZED_RESOURCES = new Set(["cpu", "memory"]);

/** The stored spec with the containers' resizable fields taken from the request (dropNonResizeUpdates). */
function takeResizable(stored: Json, proposed: Json): Json {
  const spec: Json = { ...stored, containers: resizedContainers(stored.containers, proposed.containers) };
  if (Array.isArray(stored.initContainers)) spec.initContainers = resizedContainers(stored.initContainers, proposed.initContainers);
  return spec;
}

/** The stored containers with the resources and resizePolicy the request gives the container of the same name at the same place. */
function resizedContainers(stored: unknown, proposed: unknown): unknown {
  if (!Array.isArray(stored)) return stored;
  const asked = Array.isArray(proposed) ? proposed : [];
  return stored.map((container, index) => {
    const wanted = asked[index];
    if (!isObject(container) || !isObject(wanted) || wanted.name !== container.name) return container;
    const resized: Json = { ...container };
    for (const field of RESIZABLE_FIELDS) {
      if (wanted[field] === undefined) delete resized[field];
      else resized[field] = wanted[field];
    }
    return resized;
  });
}

/** ValidatePodResize's checks on what the strategy kept, in its order and words. */
function resizeProblems(before: PodSpec, after: PodSpec): StatusCause[] {
  const causes: StatusCause[] = [];
  const qos = (spec: PodSpec) => podQosClass([...spec.initContainers, ...spec.containers], spec.resources);
  if (qos(before) !== qos(after)) {
    causes.push({ reason: "FieldValueInvalid", field: "spec", message: `Invalid value: ${JSON.stringify(qos(before))}: Pod QOS Class may not change as a result of resizing` });
  }
  const pairs = (kind: "containers" | "initContainers") => before[kind].map((old, index) => [old, after[kind][index]!, `spec.${kind}[${index}]`] as const);
  for (const [old, now, path] of [...pairs("initContainers"), ...pairs("containers")]) {
    if (removed(now.resources?.requests, old.resources?.requests)) causes.push(forbidden(`${path}.resources.requests`, "resource requests cannot be removed"));
    if (removed(now.resources?.limits, old.resources?.limits)) causes.push(forbidden(`${path}.resources.limits`, "resource limits cannot be removed"));
  }
  for (const [old, now] of pairs("containers")) {
    if (otherResourcesChanged(old, now)) causes.push(forbidden("spec", "only cpu and memory resources are mutable"));
  }
  for (const [old, now, path] of pairs("initContainers")) {
    if (otherResourcesChanged(old, now)) causes.push(forbidden(path, "only cpu and memory resources for init or sidecar containers are mutable"));
    const changed = JSON.stringify(old.resources) !== JSON.stringify(now.resources);
    if (changed && !isSidecar(now) && now.resizePolicy?.some((policy) => policy.restartPolicy === "RestartContainer")) {
      causes.push(forbidden(path, "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"));
    }
  }
  return causes;
}

function removed(now: Record<string, string> | undefined, old: Record<string, string> | undefined): boolean {
  return Object.keys(old ?? {}).some((name) => !(name in (now ?? {})));
}

/**
 * Something beside cpu and memory differs: another resource (ephemeral-storage, hugepages ...) or
 * the resizePolicy, which the strategy carries over and the validation then finds changed (a JSON
 * merge patch of the containers drops it, and is refused for it).
 */
function otherResourcesChanged(old: ContainerSpec, now: ContainerSpec): boolean {
  const others = (list: Record<string, string> | undefined) => JSON.stringify(Object.entries(list ?? {}).filter(([name]) => !RESIZED_RESOURCES.has(name)).sort());
  const policy = (c: ContainerSpec) => JSON.stringify(c.resizePolicy ?? []);
  return others(old.resources?.requests) !== others(now.resources?.requests) || others(old.resources?.limits) !== others(now.resources?.limits) || policy(old) !== policy(now);
}

function forbidden(field: string, message: string): StatusCause {
  return { reason: "FieldValueForbidden", field, message: `Forbidden: ${message}` };
}

export const podResizeRoutes = subresourceRoutes({
  path: "/api/v1/namespaces/:namespace/pods/:name/resize",
  staticPodMessage: "static pods cannot be resized",
  take: takeResizable,
  check: resizeProblems,
});
