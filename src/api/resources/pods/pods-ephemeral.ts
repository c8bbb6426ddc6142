/**
 * The pods/ephemeralcontainers subresource (`kubectl debug POD`): a PATCH or PUT that may change
 * nothing of the pod but `spec.ephemeralContainers`, and may only add to it (the API server's
 * podEphemeralContainersStrategy and ValidatePodEphemeralContainersUpdate). The loop then starts
 * the new container once, in the pod's sandbox. A static pod (a manifest file's) has none, as on a
 * cluster; GET serves the pod.
 */
import { canonicalJson } from "../../../manifest/hash.ts";
import { ManifestError } from "../../../manifest/errors.ts";
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
import { ApiError } from "../../http/status.ts";
import { refuseChange } from "./write-refusals.ts";

type Json = Record<string, unknown>;

const PATH = "/api/v1/namespaces/:namespace/pods/:name/ephemeralcontainers";

async function patchEphemeral(request: ApiRequest, api: ApiContext): Promise<Response> {
  const body = await request.body();
  return updateEphemeral(request, api, (current) => patchedPod(request, current, body));
}

async function replaceEphemeral(request: ApiRequest, api: ApiContext): Promise<Response> {
  const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), "Pod");
  if (!isObject(body)) throw ApiError.badRequest("the body of a PUT must be a Pod object");
  return updateEphemeral(request, api, () => body as JsonObject);
}

/**
 * Takes the ephemeral containers of `next(current)` onto the stored pod, the rest of it as it is
 * (dropNonEphemeralContainerUpdates), checks them, stores the pod and answers it as served.
 */
function updateEphemeral(request: ApiRequest, api: ApiContext, next: (current: JsonObject) => JsonObject): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  if (api.podWrites?.fileOf(namespace, name)) throw staticPodRefusal(name);
  const target = updateTarget(request, api, () => refuseChange("change")(request, api));
  if (!target) throw ApiError.notFound("pods", name);
  const { writes, stored, current } = target;
  const proposed = next(current);
  const metadata = (isObject(proposed.metadata) ? proposed.metadata : {}) as Json;
  const asked = expectedResourceVersion(metadata.resourceVersion);
  const wanted = isObject(proposed.spec) && Array.isArray(proposed.spec.ephemeralContainers) ? proposed.spec.ephemeralContainers : [];
  const storedSpec = (stored.object.spec ?? {}) as Json;
  const object = { ...stored.object, spec: { ...storedSpec, ephemeralContainers: wanted } };
  const origin = { uid: stored.uid, createdAt: stored.createdAt };
  let admitted;
  try {
    admitted = writes.admit(object, origin, false);
  } catch (error) {
    if (error instanceof ManifestError) throw invalidPod(name, error.issues, false);
    throw error;
  }
  const before = writes.admit(stored.object, origin, false).pod.manifest.spec as Json;
  const after = admitted.pod.manifest.spec as Json;
  const problems = onlyAdded(listOf(before.ephemeralContainers), listOf(after.ephemeralContainers));
  if (problems.length > 0) {
    const causes = problems.map((message) => ({ reason: "FieldValueForbidden", message: `Forbidden: ${message}`, field: "spec.ephemeralContainers" }));
    throw ApiError.invalid("Pod", name, causes);
  }
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

/** Existing ephemeral containers may not be removed or changed, each told apart, as the API server words it. */
function onlyAdded(before: Json[], after: Json[]): string[] {
  const byName = new Map(after.map((container) => [container.name, container]));
  return before.flatMap((old) => {
    const now = byName.get(old.name);
    if (!now) return [`existing ephemeral containers ${JSON.stringify(old.name)} may not be removed`];
    return canonicalJson(now) === canonicalJson(old) ? [] : [`existing ephemeral containers ${JSON.stringify(old.name)} may not be changed`];
  });
}

function listOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => isObject(item)) : [];
}

/**
 * What the API server answers for a mirror pod ("static pods do not support ephemeral containers"),
 * on the root path field.NewPath(""), which prints as "[]" in the message and the cause alike.
 */
function staticPodRefusal(name: string): ApiError {
  const message = "Forbidden: static pods do not support ephemeral containers";
  return ApiError.invalid("Pod", name, [{ reason: "FieldValueForbidden", message, field: "[]" }]);
}

export const podEphemeralRoutes: Route[] = [
  { method: "GET", path: PATH, handle: getPod },
  { method: "PATCH", path: PATH, handle: patchEphemeral },
  { method: "PUT", path: PATH, handle: replaceEphemeral },
];
