/**
 * POST a Pod (`kubectl create -f`, `kubectl run`, `kubectl apply -f` of a new pod): admitted by the
 * rules a manifest file meets on this agent, stored in one transaction, and acknowledged (201 with
 * the stored object) only once committed; the source hears of it after the commit, which wakes the
 * loop. Under `serve` there is no loop to run it: the create is refused as before.
 */
import { randomUUID } from "node:crypto";
import { ManifestError } from "../../../manifest/errors.ts";
import { isPlainObject } from "../../../manifest/fields.ts";
import { ApiPodWriteError } from "../../../store/api-pod-store.ts";
import { podObject, unsyncedStatus } from "../../../v1/pod-object.ts";
import { isoTime } from "../../../v1/time.ts";
import type { ApiContext, PodWrites } from "../../http/context.ts";
import type { ApiRequest } from "../../http/http.ts";
import { fieldValidation, invalidPod, isDryRun, storeRefusal, writeWarnings } from "./pod-write-status.ts";
import { admitCreateIn } from "../namespaces/namespace-lifecycle.ts";
import { clientMetadata, createdName, creationTime } from "../object-meta.ts";
import { ensureNamespaceDefaults } from "../objects/namespace-defaults.ts";
import { decodeBody, type ExpectedKind } from "../../http/request-body.ts";
import { ApiError } from "../../http/status.ts";
import { refuseCreate } from "./write-refusals.ts";
import { admitServiceAccount } from "./service-account-admission.ts";

const POD_KIND: ExpectedKind = { apiVersion: "v1", kind: "Pod", internalPackage: "core" };

export async function createPod(request: ApiRequest, api: ApiContext): Promise<Response> {
  const writes = api.podWrites;
  if (!writes) return refuseCreate(request, api);
  const namespace = request.params.namespace!;
  const validation = fieldValidation(request.query);
  const strict = validation === "Strict";
  const dryRun = isDryRun(request.query);
  const submitted = await decodeBody(request, POD_KIND);
  const metadata = isPlainObject(submitted.metadata) ? { ...submitted.metadata } : {};
  if (typeof metadata.namespace === "string" && metadata.namespace !== "" && metadata.namespace !== namespace) {
    throw ApiError.badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  admitCreateIn(api, namespace, "pods", typeof metadata.name === "string" ? metadata.name : "");
  const name = createdName(metadata);
  // Whole seconds: metadata.creationTimestamp has no finer grain, and the pod reports this value.
  const createdAt = creationTime(api.clock.now());
  const uid = randomUUID();
  const { status: _ignoredOnCreate, ...rest } = submitted;
  const object = { ...rest, metadata: { ...clientMetadata(metadata), name, namespace, uid, creationTimestamp: isoTime(createdAt) } };

  admitServiceAccount(object, namespace, name, (account) => writes.objects.get({ resource: "serviceaccounts", namespace, name: account }));

  let admitted;
  try {
    admitted = writes.admit(object, { uid, createdAt }, strict, "create");
  } catch (error) {
    if (error instanceof ManifestError) throw invalidPod(name, error.issues, strict);
    throw error;
  }
  refuseFileName(api, writes, namespace, name);
  const headers = new Headers({ "Content-Type": "application/json" });
  for (const warning of writeWarnings(admitted.warnings, validation)) headers.append("Warning", warning);
  // Stored as decoded (unknown fields dropped, the API's defaults applied), and served as a GET will
  // serve it until the loop has synced the pod: one drawing, saved with the row.
  const served = podObject(admitted.pod, { createdAt }, unsyncedStatus(admitted.pod));
  if (!dryRun) {
    let resourceVersion: number;
    try {
      resourceVersion = writes.store.create({ uid, namespace, name, object: admitted.pod.manifest, createdAt, served: served as unknown as Record<string, unknown> }).resourceVersion;
    } catch (error) {
      if (error instanceof ApiPodWriteError) throw storeRefusal(error);
      throw error;
    }
    writes.changed();
    // A namespace made by its first pod (as a static pod makes one) gets its ServiceAccount now.
    ensureNamespaceDefaults(writes.objects, namespace, api.clock.now(), api.rootCa);
    served.metadata.resourceVersion = String(resourceVersion);
  }
  return new Response(JSON.stringify(served), { status: 201, headers });
}

/**
 * A name a manifest file's pod holds is taken: 409, naming the file. A file's pod is named NAME-NODE
 * with --node, so `kubectl apply -f` of that very manifest arrives as a create of NAME: it is told
 * which file runs it (405, as before pods could be created) instead of starting the pod twice.
 */
function refuseFileName(api: ApiContext, writes: PodWrites, namespace: string, name: string): void {
  const file = writes.fileOf(namespace, name);
  if (file) throw new ApiError(409, "AlreadyExists", `pods "${name}" already exists: it comes from the manifest file ${file}`, { name, kind: "pods" });
  for (const row of api.store.livePods({ namespace })) {
    const spec = api.store.podRecord(row.uid)?.spec;
    if (spec && !spec.api && spec.name === name && row.name !== name) {
      throw new ApiError(405, "MethodNotAllowed", `pod ${row.name} comes from the manifest file ${spec.source}: edit the file to change it`, { name: row.name, kind: "pods" });
    }
  }
}
