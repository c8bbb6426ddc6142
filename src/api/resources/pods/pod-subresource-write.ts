/**
 * A pod subresource that changes one part of an API pod (ephemeralcontainers, resize): GET serves
 * the pod; a PATCH or PUT is applied to the pod as served, then only the part the subresource owns
 * is taken onto the stored pod (the API server's strategy drops the rest), the result is admitted
 * and checked against the pod before it, stored, and answered as served. A static pod (a manifest
 * file's) is refused in the subresource's words.
 */
import { ManifestError } from "../../../manifest/errors.ts";
import type { PodSpec } from "../../../manifest/types.ts";
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

export type Json = Record<string, unknown>;

export interface SubresourceWrite {
  /** The pod's path under the API, ending in the subresource. */
  path: string;
  /** The API server's refusal for a mirror pod: its message, on the root path (which prints as "[]"). */
  staticPodMessage: string;
  /** The stored pod's spec with what the request may change taken from the proposed one. */
  take(storedSpec: Json, proposedSpec: Json): Json;
  /** What the API server refuses in the change, as causes; none when it is allowed. */
  check(before: PodSpec, after: PodSpec): StatusCause[];
}

export function subresourceRoutes(write: SubresourceWrite): Route[] {
  const patch = async (request: ApiRequest, api: ApiContext) => {
    const body = await request.body();
    return update(write, request, api, (current) => patchedPod(request, current, body));
  };
  const replace = async (request: ApiRequest, api: ApiContext) => {
    const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), "Pod");
    if (!isObject(body)) throw ApiError.badRequest("the body of a PUT must be a Pod object");
    return update(write, request, api, () => body as JsonObject);
  };
  return [
    { method: "GET", path: write.path, handle: getPod },
    { method: "PATCH", path: write.path, handle: patch },
    { method: "PUT", path: write.path, handle: replace },
  ];
}

function update(write: SubresourceWrite, request: ApiRequest, api: ApiContext, next: (current: JsonObject) => JsonObject): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  if (api.podWrites?.fileOf(namespace, name)) throw ApiError.invalid("Pod", name, [{ reason: "FieldValueForbidden", message: `Forbidden: ${write.staticPodMessage}`, field: "[]" }]);
  const target = updateTarget(request, api, () => refuseChange("change")(request, api));
  if (!target) throw ApiError.notFound("pods", name);
  const { writes, stored, current } = target;
  const proposed = next(current);
  const metadata = (isObject(proposed.metadata) ? proposed.metadata : {}) as Json;
  const asked = expectedResourceVersion(metadata.resourceVersion);
  const storedSpec = (stored.object.spec ?? {}) as Json;
  const object = { ...stored.object, spec: write.take(storedSpec, (isObject(proposed.spec) ? proposed.spec : {}) as Json) };
  const origin = { uid: stored.uid, createdAt: stored.createdAt };
  let admitted;
  try {
    admitted = writes.admit(object, origin, false);
  } catch (error) {
    if (error instanceof ManifestError) throw invalidPod(name, error.issues, false);
    throw error;
  }
  const causes = write.check(writes.admit(stored.object, origin, false).pod, admitted.pod);
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
