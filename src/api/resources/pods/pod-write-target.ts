/**
 * What a write to an API pod starts from (PATCH, PUT, the ephemeralcontainers subresource): the
 * stored pod, the pod as a GET serves it now, and the patch applied to it; a file's pod or a pod
 * not there is the API server's refusal.
 */
import type { PodWrites } from "../../../config/pod-writes.ts";
import { podObject, unsyncedStatus } from "../../../v1/pod-object.ts";
import type { V1Pod } from "../../../v1/v1.ts";
import type { StoredApiPod } from "../../../store/api-pod-store.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest } from "../../http/http.ts";
import { applyPatch, decodePatch, patchKind, PATCH_CONTENT_TYPES } from "../../patch/apply-patch.ts";
import { PatchError, type JsonObject } from "../../patch/json.ts";
import type { PatchSchema } from "../../patch/patch-schema.ts";
import { apiPod } from "./pods-api.ts";
import { ApiError } from "../../http/status.ts";

export interface UpdateTarget {
  writes: PodWrites;
  stored: StoredApiPod;
  /** The pod as a GET serves it now, resourceVersion included: what a patch applies to. */
  current: JsonObject;
}

/** The API pod a write names, or the API server's refusal: 405 for a file's pod, 404 for none. */
export function updateTarget(request: ApiRequest, api: ApiContext, refuse: () => never): UpdateTarget | undefined {
  const { namespace, name } = request.params as { namespace: string; name: string };
  const writes = api.podWrites;
  if (!writes) refuse();
  const stored = writes.store.get(namespace, name);
  if (!stored) {
    // A pod the API did not create (a manifest file's) is refused with its file.
    if (writes.fileOf(namespace, name) || api.store.livePods({ namespace, name }).length > 0) refuse();
    return undefined;
  }
  const row = api.store.livePods({ namespace, name }).find((r) => r.uid === stored.uid);
  return { writes, stored, current: (row ? apiPod(row) : unservedPod(writes, stored)) as unknown as JsonObject };
}

/**
 * A pod stored before writes saved the object they serve (migrations/0009) that the loop has not
 * synced yet: drawn as its create would have drawn it.
 */
function unservedPod(writes: PodWrites, stored: StoredApiPod): V1Pod {
  const spec = writes.admit(stored.object, { uid: stored.uid, createdAt: stored.createdAt }, false).pod;
  const pod = podObject(spec, { createdAt: stored.createdAt, ...deletionOf(stored) }, unsyncedStatus(spec));
  pod.metadata.resourceVersion = String(writes.store.resourceVersion(stored.namespace, stored.name) ?? stored.resourceVersion);
  return pod;
}

export function deletionOf(stored: StoredApiPod): { deletion?: { requestedAt: number; graceSeconds: number } } {
  return stored.deletion ? { deletion: { requestedAt: stored.deletion.requestedAt, graceSeconds: stored.deletion.gracePeriodSeconds } } : {};
}

/** PATCH: the body (read once by the caller) applied to the object as served (a pod unless `schema` says), by its Content-Type. */
export function patchedPod(request: ApiRequest, current: JsonObject, body: Uint8Array, schema?: PatchSchema): JsonObject {
  const kind = patchKind(request.headers.get("content-type"));
  if (!kind) {
    const accepted = Object.values(PATCH_CONTENT_TYPES).join(", ");
    throw new ApiError(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${accepted}`);
  }
  try {
    return applyPatch(kind, current, decodePatch(kind, new TextDecoder().decode(body)), schema);
  } catch (error) {
    if (error instanceof PatchError) throw new ApiError(error.code, PATCH_ERROR_REASONS[error.code], error.message);
    throw error;
  }
}

const PATCH_ERROR_REASONS = { 400: "BadRequest", 413: "RequestEntityTooLarge", 422: "Invalid" } as const;

/** A resourceVersion a client sent (a precondition), as this server gave it; undefined for none. */
export function expectedResourceVersion(value: unknown): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 0) throw ApiError.badRequest(`invalid resourceVersion ${JSON.stringify(value)}: it must be one this server gave`);
  return number;
}
