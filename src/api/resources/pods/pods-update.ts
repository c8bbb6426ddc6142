/**
 * PATCH and PUT of a pod created through the API: load it, apply the patch (or take the body),
 * admit the result by the same rules as a manifest file, check it against the API server's pod
 * update rules, and store it with the resourceVersion it was based on (a stale one is a 409
 * Conflict). The answer is the updated pod; `dryRun=All` answers it without storing. A pod from a
 * manifest file is changed by editing its file: 405 naming the file.
 */
import { ManifestError, formatIssue, formatPath, type Issue } from "../../../manifest/errors.ts";
import { podUpdateIssues } from "../../../manifest/pod-update.ts";
import type { PodSpec } from "../../../manifest/types.ts";
import { podObject } from "../../../v1/pod-object.ts";
import type { V1PodStatus } from "../../../v1/v1.ts";
import { ApiPodWriteError, type StoredApiPod } from "../../../store/api-pod-store.ts";
import { fieldValidation, invalidPod, isDryRun, storeRefusal, writeWarnings } from "./pod-write-status.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { isObject, PatchError, type JsonObject } from "../../patch/json.ts";
import { decodePatch, patchKind } from "../../patch/apply-patch.ts";
import { deletionOf, expectedResourceVersion, patchedPod, updateTarget, type UpdateTarget } from "./pod-write-target.ts";
import { decodeRequestObject } from "../../http/request-object.ts";
import { ApiError } from "../../http/status.ts";
import { refuseChange } from "./write-refusals.ts";
import { createPod } from "./pods-create.ts";

type Json = Record<string, unknown>;

/** The annotations the agent adds to every pod it serves: never stored as the user's. */
const AGENT_ANNOTATION = /^kubernetes\.io\/config\./;

/**
 * Stores `next` as the new version of the target's pod, after every check, if the pod is still at
 * `expected` (a 409 Conflict otherwise; undefined: whatever its version); answers 200 with it.
 */
function updatePod(request: ApiRequest, api: ApiContext, target: UpdateTarget, next: JsonObject, expected: number | undefined): Response {
  const { writes, stored, current } = target;
  const options = writeOptions(request.query);
  const metadata = (isObject(next.metadata) ? next.metadata : {}) as Json;
  if (metadata.name !== undefined && metadata.name !== stored.name) {
    throw ApiError.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${stored.name})`);
  }
  if (metadata.namespace !== undefined && metadata.namespace !== stored.namespace) {
    throw ApiError.badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  const object = storedForm(stored, metadata, next.spec);
  const origin = { uid: stored.uid, createdAt: stored.createdAt };
  let admitted;
  try {
    admitted = writes.admit(object, origin, options.strict);
  } catch (error) {
    if (error instanceof ManifestError) throw invalidPod(stored.name, error.issues, options.strict);
    throw error;
  }
  // Both sides as decoded (unknown fields dropped, defaults applied), so a default is never taken for a change.
  const before = writes.admit(stored.object, origin, false).pod;
  const identity = { name: stored.name, namespace: stored.namespace, uid: stored.uid };
  const issues = podUpdateIssues({ metadata: identity, spec: comparableSpec(before) }, { metadata: { ...identity, ...metadata }, spec: comparableSpec(admitted.pod) });
  if (issues.length > 0) throw updateRefused(stored.name, issues);
  const warnings = writeWarnings(admitted.warnings, options.validation);
  // Served at once with the new metadata and spec, and the status the loop last reported: a GET
  // right after the write reads what it wrote, whether or not the loop has synced it yet.
  const answer = podObject(admitted.pod, { createdAt: stored.createdAt, ...deletionOf(stored) }, (current.status ?? {}) as V1PodStatus);
  let resourceVersion = Number(current.metadata && (current.metadata as Json).resourceVersion);
  if (!options.dryRun) {
    try {
      resourceVersion = writes.store.update(stored.namespace, stored.name, expected, admitted.pod.manifest, answer as unknown as Json).resourceVersion;
    } catch (error) {
      if (error instanceof ApiPodWriteError) throw storeRefusal(error);
      throw error;
    }
    writes.changed();
  }
  answer.metadata.resourceVersion = String(resourceVersion);
  const headers = new Headers({ "Content-Type": "application/json" });
  for (const warning of warnings) headers.append("Warning", warning);
  return new Response(JSON.stringify(answer), { status: 200, headers });
}

interface WriteOptions {
  dryRun: boolean;
  strict: boolean;
  validation: "Strict" | "Warn" | "Ignore";
}

function writeOptions(query: URLSearchParams): WriteOptions {
  const validation = fieldValidation(query);
  return { dryRun: isDryRun(query), strict: validation === "Strict", validation };
}

/** The object to store: the user's metadata (labels, annotations) on the pod's identity, and the spec; status is the loop's. */
function storedForm(stored: StoredApiPod, metadata: Json, spec: unknown): Json {
  const storedMetadata = (stored.object.metadata ?? {}) as Json;
  const annotations = isObject(metadata.annotations)
    ? Object.fromEntries(Object.entries(metadata.annotations).filter(([key]) => !AGENT_ANNOTATION.test(key)))
    : undefined;
  const kept: Json = { ...storedMetadata, labels: metadata.labels, annotations };
  for (const key of ["labels", "annotations"]) if (kept[key] === undefined || Object.keys(kept[key] as Json).length === 0) delete kept[key];
  // The node is the agent's to set on what it serves; a client echoing it back stores nothing new.
  const { nodeName: _setByTheAgent, ...rest } = isObject(spec) ? (spec as Json) : {};
  return { apiVersion: "v1", kind: "Pod", metadata: kept, spec: isObject(spec) ? rest : spec };
}

/** The spec as stored (storedForm leaves out the node the agent sets), the API's defaults included. */
function comparableSpec(pod: PodSpec): Json {
  const { nodeName: _written, ...spec } = (pod.manifest.spec ?? {}) as Json;
  return spec;
}


/**
 * The update rules' refusal: 422 Invalid, `Pod "web" is invalid: spec: Forbidden: pod updates may
 * not change ...`. The rules word their messages with the error type (Forbidden, Invalid value), as
 * the API server renders a field error.
 */
function updateRefused(name: string, issues: readonly Issue[]): ApiError {
  const causes = issues.map((issue) => ({
    reason: issue.message.startsWith("Forbidden") ? "FieldValueForbidden" : "FieldValueInvalid",
    message: issue.message,
    field: formatPath(issue.path),
  }));
  const rendered = issues.map(formatIssue);
  return new ApiError(422, "Invalid", `Pod "${name}" is invalid: ${rendered.length === 1 ? rendered[0] : `[${rendered.join(", ")}]`}`, { name, kind: "Pod", causes });
}

/** How often a PATCH is applied again to a pod that changed under it (its status, another write) before the 409 is answered. */
const PATCH_ATTEMPTS = 5;

/**
 * Like the API server, a PATCH applies to the newest pod: when the pod changed between the read
 * and the write, the patch is applied again to the new version, unless it carries a
 * resourceVersion of its own (then the change is a 409, as the client asked).
 */
async function patchPod(request: ApiRequest, api: ApiContext): Promise<Response> {
  const body = await request.body();
  for (let attempt = 1; ; attempt++) {
    const target = updateTarget(request, api, () => refuseChange("change")(request, api));
    if (!target && patchKind(request.headers.get("content-type")) === "apply") return applyCreate(request, api, body);
    if (!target) throw ApiError.notFound("pods", request.params.name!);
    const base = Number((target.current.metadata as Json).resourceVersion);
    const next = patchedPod(request, target.current, body);
    const asked = expectedResourceVersion((next.metadata as Json | undefined)?.resourceVersion);
    const precondition = asked !== undefined && asked !== base ? asked : undefined;
    try {
      return updatePod(request, api, target, next, precondition ?? base);
    } catch (error) {
      const retry = error instanceof ApiError && error.reason === "Conflict" && precondition === undefined && attempt < PATCH_ATTEMPTS;
      if (!retry) throw error;
    }
  }
}

/** Server-side apply of a pod that is not there creates it, as a POST of the applied object would. */
async function applyCreate(request: ApiRequest, api: ApiContext, body: Uint8Array): Promise<Response> {
  let object: JsonObject;
  try {
    const decoded = decodePatch("apply", new TextDecoder().decode(body));
    if (!isObject(decoded)) throw new PatchError("an apply body must be a Pod object");
    object = decoded;
  } catch (error) {
    if (error instanceof PatchError) throw ApiError.badRequest(error.message);
    throw error;
  }
  const metadata = (isObject(object.metadata) ? object.metadata : {}) as Json;
  if (metadata.name !== undefined && metadata.name !== request.params.name) {
    throw ApiError.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${request.params.name})`);
  }
  const json = new TextEncoder().encode(JSON.stringify({ ...object, metadata: { ...metadata, name: request.params.name } }));
  return createPod({ ...request, headers: new Headers({ "content-type": "application/json" }), body: async () => json }, api);
}

async function replacePod(request: ApiRequest, api: ApiContext): Promise<Response> {
  const target = updateTarget(request, api, () => refuseChange("change")(request, api));
  if (!target) throw ApiError.notFound("pods", request.params.name!);
  const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), "Pod");
  if (!isObject(body)) throw ApiError.badRequest("the body of a PUT must be a Pod object");
  return updatePod(request, api, target, body, expectedResourceVersion((body.metadata as Json | undefined)?.resourceVersion));
}

/** Before the write refusals (object-routes.ts), which still answer for file pods and under `serve`. */
export const podUpdateRoutes: Route[] = [
  { method: "PATCH", path: "/api/v1/namespaces/:namespace/pods/:name", handle: patchPod },
  { method: "PUT", path: "/api/v1/namespaces/:namespace/pods/:name", handle: replacePod },
];
