/**
 * DELETE a pod created through the API (`kubectl delete pod`, `--grace-period`, `--now`,
 * `--force --grace-period=0`, preconditions): the row is marked Terminating with its grace in one
 * transaction, the answer (200 with the pod, deletionTimestamp set) comes after the commit, and the
 * loop stops the pod (preStop, TERM, grace, KILL) as for a removed file; once it is gone, its row
 * goes and watches see DELETED, which ends kubectl's `--wait`. A manifest file's pod is refused
 * with the file's path (removing the file deletes it), as is every delete under `serve`.
 */
import { isPlainObject } from "../../../manifest/fields.ts";
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from "../../../manifest/defaults.ts";
import { ApiPodWriteError, type ApiPodDeletion, type DeletePreconditions, type StoredApiPod } from "../../../store/api-pod-store.ts";
import { podObject, unsyncedStatus } from "../../../v1/pod-object.ts";
import type { V1Pod } from "../../../v1/v1.ts";
import type { ApiContext, PodWrites } from "../../http/context.ts";
import type { ApiRequest } from "../../http/http.ts";
import { apiPod } from "./pods-api.ts";
import { isDryRun, storeRefusal } from "./pod-write-status.ts";
import { decodeRequestObject } from "../../http/request-object.ts";
import { ApiError } from "../../http/status.ts";
import { jsonResponse } from "../../http/table.ts";
import { refuseChange } from "./write-refusals.ts";

const refuseDelete = refuseChange("delete");

export async function deletePod(request: ApiRequest, api: ApiContext): Promise<Response> {
  const writes = api.podWrites;
  const { namespace, name } = request.params as { namespace: string; name: string };
  const stored = writes?.store.get(namespace, name);
  if (!writes || !stored) return refuseDelete(request, api);
  const options = await deleteOptions(request);
  let deleted: DeletedPod;
  try {
    deleted = deleteApiPod(api, writes, stored, options);
  } catch (error) {
    if (error instanceof ApiPodWriteError) throw storeRefusal(error);
    throw error;
  }
  if (!options.dryRun) writes.changed();
  return jsonResponse({ ...deleted.served, metadata: { ...deleted.served.metadata, resourceVersion: String(deleted.resourceVersion) } });
}

export interface DeletedPod {
  /** The pod as the delete's answer serves it (and a GET serves next). */
  served: V1Pod;
  resourceVersion: number;
}

/**
 * Marks an API pod Terminating with the grace `options` give (else its own), in one transaction
 * (or a savepoint of the caller's: a namespace's delete deletes its pods in its own), drawing the
 * Pod it is served as once and saving it with the row. Throws ApiPodWriteError (a precondition's
 * Conflict); the caller wakes the loop (`writes.changed()`) once it has committed.
 */
export function deleteApiPod(api: ApiContext, writes: PodWrites, stored: StoredApiPod, options: { gracePeriodSeconds?: number; preconditions?: DeletePreconditions; dryRun?: boolean } = {}): DeletedPod {
  const { namespace, name } = stored;
  const gracePeriodSeconds = options.gracePeriodSeconds ?? specGrace(stored);
  const current = api.store.livePods({ namespace, name }).find((row) => row.uid === stored.uid);
  // Drawn once, with the deletion the write ends with, and saved with it: the answer is what a GET serves next.
  const draw = (deletion: ApiPodDeletion): V1Pod => {
    const spec = writes.admit(stored.object, { uid: stored.uid, createdAt: stored.createdAt }, false).pod;
    const status = current?.object.status ?? unsyncedStatus(spec);
    return podObject(spec, { createdAt: stored.createdAt, deletion: { requestedAt: deletion.requestedAt, graceSeconds: deletion.gracePeriodSeconds } }, status);
  };
  const requested = { requestedAt: api.clock.now(), gracePeriodSeconds };
  if (options.dryRun) return { served: draw(stored.deletion ?? requested), resourceVersion: writes.store.resourceVersion(namespace, name) ?? stored.resourceVersion };
  let drawn: V1Pod | undefined;
  const deleting = writes.store.markDeleting(namespace, name, requested, options.preconditions, (deletion) => (drawn = draw(deletion)) as unknown as Record<string, unknown>);
  // A second delete that does not shorten the grace changes nothing: the pod is served as it was.
  const served = drawn ?? (current ? apiPod(current) : draw(deleting.deletion!));
  return { served, resourceVersion: Math.max(deleting.resourceVersion, current?.revision ?? 0) };
}

interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions: DeletePreconditions;
  dryRun: boolean;
}

/** DeleteOptions from the body (kubectl sends one) and the query (`?gracePeriodSeconds=`, `?dryRun=All`). */
async function deleteOptions(request: ApiRequest): Promise<DeleteOptions> {
  const bytes = await request.body();
  let body: Record<string, unknown> = {};
  // As the API server's delete handler: only a body with something in it is decoded.
  if (new TextDecoder().decode(bytes).trim() !== "") {
    const decoded = decodeRequestObject(bytes, request.headers.get("content-type"), "DeleteOptions");
    if (!isPlainObject(decoded)) throw ApiError.badRequest("the request body is not a DeleteOptions object");
    body = decoded;
  }
  const fromQuery = request.query.get("gracePeriodSeconds");
  const grace = body.gracePeriodSeconds ?? (fromQuery === null ? undefined : Number(fromQuery));
  if (grace !== undefined && grace !== null && (typeof grace !== "number" || !Number.isInteger(grace) || grace < 0)) {
    throw ApiError.badRequest(`gracePeriodSeconds must be a whole number of seconds, 0 or more (got ${JSON.stringify(body.gracePeriodSeconds ?? fromQuery)})`);
  }
  const preconditions = isPlainObject(body.preconditions) ? body.preconditions : {};
  return {
    ...(typeof grace === "number" && { gracePeriodSeconds: grace }),
    preconditions: {
      ...(typeof preconditions.uid === "string" && { uid: preconditions.uid }),
      ...(typeof preconditions.resourceVersion === "string" && { resourceVersion: preconditions.resourceVersion }),
    },
    dryRun: isDryRun(request.query, body),
  };
}

/** The pod's own terminationGracePeriodSeconds: what a delete without a grace period gets. */
function specGrace(stored: StoredApiPod): number {
  const spec = isPlainObject(stored.object.spec) ? stored.object.spec : {};
  const grace = spec.terminationGracePeriodSeconds;
  return typeof grace === "number" && Number.isInteger(grace) && grace >= 0 ? grace : DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}
