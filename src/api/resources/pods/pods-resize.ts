/**
 * The pods/resize subresource (`kubectl patch pod web --subresource resize`, KEP-1287): a PATCH or
 * PUT that changes nothing of the pod but its containers' resources and resizePolicy (the API
 * server's podResizeStrategy, dropNonResizeUpdates), checked as ValidatePodResize checks it: not a
 * static pod, the same QoS class, no request or limit removed, only cpu and memory changed. The
 * loop then allocates and applies the new values (kubelet/pod-resize.ts). GET serves the pod.
 */
import { ManifestError } from "../../../manifest/errors.ts";
import { podQosClass } from "../../../manifest/qos.ts";
import type { ContainerSpec, PodSpec } from "../../../manifest/types.ts";
import { isSidecar } from "../../../manifest/types.ts";
import { podObject } from "../../../v1/pod-object.ts";
import type { V1PodStatus } from "../../../v1/v1.ts";
import { ApiPodWriteError } from "../../../store/api-pod-store.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { isObject, type JsonObject } from "../../patch/json.ts";
import { deletionOf, expectedResourceVersion, patchedPod, updateTarget } from "./pod-write-target.ts";
import { invalidPod, isDryRun, storeRefusal } from "./pod-write-status.ts";
import { getPod } from "./pods-api.ts";
import { decodeRequestObject } from "../../http/request-object.ts";
import { ApiError, type StatusCause } from "../../http/status.ts";
import { refuseChange } from "./write-refusals.ts";

type Json = Record<string, unknown>;

const PATH = "/api/v1/namespaces/:namespace/pods/:name/resize";
/** What a resize may change of a container. */
const RESIZABLE_FIELDS = ["resources", "resizePolicy"] as const;
const RESIZED_RESOURCES = new Set(["cpu", "memory"]);

async function patchResize(request: ApiRequest, api: ApiContext): Promise<Response> {
  const body = await request.body();
  return updateResize(request, api, (current) => patchedPod(request, current, body));
}

async function replaceResize(request: ApiRequest, api: ApiContext): Promise<Response> {
  const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), "Pod");
  if (!isObject(body)) throw ApiError.badRequest("the body of a PUT must be a Pod object");
  return updateResize(request, api, () => body as JsonObject);
}

function updateResize(request: ApiRequest, api: ApiContext, next: (current: JsonObject) => JsonObject): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  // The API server's words for a mirror pod, on the root path (which prints as "[]").
  if (api.podWrites?.fileOf(namespace, name)) throw ApiError.invalid("Pod", name, [forbidden("[]", "static pods cannot be resized")]);
  const target = updateTarget(request, api, () => refuseChange("change")(request, api));
  if (!target) throw ApiError.notFound("pods", name);
  const { writes, stored, current } = target;
  const proposed = next(current);
  const metadata = (isObject(proposed.metadata) ? proposed.metadata : {}) as Json;
  const asked = expectedResourceVersion(metadata.resourceVersion);
  const storedSpec = (stored.object.spec ?? {}) as Json;
  const proposedSpec = (isObject(proposed.spec) ? proposed.spec : {}) as Json;
  const object = {
    ...stored.object,
    spec: { ...storedSpec, containers: resizedContainers(storedSpec.containers, proposedSpec.containers), initContainers: resizedContainers(storedSpec.initContainers, proposedSpec.initContainers) },
  };
  if (!Array.isArray(storedSpec.initContainers)) delete (object.spec as Json).initContainers;
  const origin = { uid: stored.uid, createdAt: stored.createdAt };
  let admitted;
  try {
    admitted = writes.admit(object, origin, false);
  } catch (error) {
    if (error instanceof ManifestError) throw invalidPod(name, error.issues, false);
    throw error;
  }
  const before = writes.admit(stored.object, origin, false).pod;
  const causes = resizeProblems(before, admitted.pod);
  if (causes.length > 0) throw ApiError.invalid("Pod", name, causes);
  const answer = podObject(admitted.pod, { createdAt: stored.createdAt, ...deletionOf(stored) }, (current.status ?? {}) as V1PodStatus);
  let resourceVersion = Number((current.metadata as Json | undefined)?.resourceVersion ?? 0);
  if (!isDryRun(request.query)) {
    try {
      resourceVersion = writes.store.update(namespace, name, asked, admitted.pod.manifest, answer as unknown as Json).resourceVersion;
    } catch (error) {
      if (error instanceof ApiPodWriteError) throw storeRefusal(error);
      throw error;
    }
    writes.changed();
  }
  answer.metadata.resourceVersion = String(resourceVersion);
  return Response.json(answer);
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

export const podResizeRoutes: Route[] = [
  { method: "GET", path: PATH, handle: getPod },
  { method: "PATCH", path: PATH, handle: patchResize },
  { method: "PUT", path: PATH, handle: replaceResize },
];
