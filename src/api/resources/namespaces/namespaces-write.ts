/**
 * POST and DELETE of namespaces under `run` (`kubectl create namespace`, `kubectl delete ns`), as
 * the API server answers them. A create is validated (the name a DNS-1123 label, labels as labels),
 * defaulted (the `kubernetes` finalizer, the `kubernetes.io/metadata.name` label) and stored. A
 * delete marks the namespace Terminating and deletes its API pods gracefully in one transaction; it
 * is gone once they are (namespace-store.ts), which ends kubectl's `--wait`. A namespace holding a
 * manifest file's pod is not deleted: removing the file is how that pod goes. Under `serve` both are
 * refused: no loop would run what they change.
 */
import { randomUUID } from "node:crypto";
import { isPlainObject } from "../../../manifest/fields.ts";
import { checkAnnotationsSize, checkDns1123Label } from "../../../manifest/names.ts";
import { ApiPodWriteError } from "../../../store/api-pod-store.ts";
import { NamespaceWriteError, type NewNamespace, type StoredNamespace } from "../../../store/namespace-store.ts";
import type { ApiContext, PodWrites } from "../../http/context.ts";
import type { ApiRequest } from "../../http/http.ts";
import { admitNamespaceDelete } from "./namespace-lifecycle.ts";
import { ensureNamespaceDefaults } from "../objects/namespace-defaults.ts";
import { findNamespace, storedEntry } from "./namespace-objects.ts";
import { clientMetadata, createdName, creationTime, labelCauses, stringMap } from "../object-meta.ts";
import { deleteOptions } from "../delete-options.ts";
import { isDryRun, storeRefusal } from "../pods/pod-write-status.ts";
import { deleteApiPod } from "../pods/pods-delete.ts";
import { decodeBody, type ExpectedKind } from "../../http/request-body.ts";
import { ApiError, type StatusCause } from "../../http/status.ts";
import { jsonResponse } from "../../http/table.ts";

const NAMESPACE_KIND: ExpectedKind = { apiVersion: "v1", kind: "Namespace", internalPackage: "core" };
const KUBERNETES_FINALIZER = "kubernetes";
/** The API server's ValidateNamespaceName message (a DNS-1123 label). */
const DNS1123_LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

function needsAgent(action: "created" | "deleted"): ApiError {
  return new ApiError(405, "MethodNotAllowed", `namespaces are ${action} through the agent's API (minikubelet run), not through this server, which only reads its database`, { kind: "namespaces" });
}

export async function createNamespace(request: ApiRequest, api: ApiContext): Promise<Response> {
  const writes = api.podWrites;
  if (!writes) throw needsAgent("created");
  const dryRun = isDryRun(request.query);
  const submitted = await decodeBody(request, NAMESPACE_KIND);
  // A cluster-scoped object's namespace is cleared, as BeforeCreate does.
  const { namespace: _clusterScoped, ...metadata } = clientMetadata(isPlainObject(submitted.metadata) ? submitted.metadata : {});
  const name = createdName(metadata);
  const labels = stringMap(metadata.labels);
  const annotations = stringMap(metadata.annotations);
  const tooLong = checkAnnotationsSize(annotations ?? {});
  const causes = [...nameCauses(name), ...labelCauses(labels), ...(tooLong ? [{ reason: "FieldValueTooLong", message: tooLong, field: "metadata.annotations" }] : [])];
  if (causes.length > 0) throw ApiError.invalid("Namespace", name, causes);
  const existing = findNamespace(api.store, name, 0);
  if (existing) {
    const conflict = ApiError.alreadyExists("namespaces", name);
    // The API server's wording for a name whose holder is still being deleted.
    throw existing.namespace.metadata.deletionTimestamp ? new ApiError(409, "AlreadyExists", `object is being deleted: ${conflict.message}`, conflict.details) : conflict;
  }
  const spec = isPlainObject(submitted.spec) ? submitted.spec : {};
  const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers.filter((finalizer): finalizer is string => typeof finalizer === "string") : [];
  if (!finalizers.includes(KUBERNETES_FINALIZER)) finalizers.push(KUBERNETES_FINALIZER);
  const namespace: NewNamespace = {
    name,
    uid: randomUUID(),
    createdAt: creationTime(api.clock.now()),
    object: { metadata: { ...(labels && { labels }), ...(annotations && { annotations }) }, spec: { finalizers } },
  };
  let stored: StoredNamespace;
  if (dryRun) {
    stored = { ...namespace, deleted: false, revision: api.store.revision(), createdRevision: api.store.revision() };
  } else {
    try {
      stored = writes.namespaces.create(namespace);
      ensureNamespaceDefaults(writes.objects, name, api.clock.now(), api.rootCa);
    } catch (error) {
      if (error instanceof NamespaceWriteError) throw ApiError.alreadyExists("namespaces", name);
      throw error;
    }
  }
  return new Response(JSON.stringify(storedEntry(stored).namespace), { status: 201, headers: { "Content-Type": "application/json" } });
}

export async function deleteNamespace(request: ApiRequest, api: ApiContext): Promise<Response> {
  const name = request.params.name!;
  admitNamespaceDelete(name);
  const found = findNamespace(api.store, name, api.store.revision());
  if (!found) throw ApiError.notFound("namespaces", name);
  const writes = api.podWrites;
  if (!writes) throw needsAgent("deleted");
  const options = await deleteOptions(request);
  if (options.uid !== undefined && options.uid !== found.namespace.metadata.uid) {
    throw ApiError.conflict("namespaces", name, `Precondition failed: UID in precondition: ${options.uid}, UID in object meta: ${found.namespace.metadata.uid}`);
  }
  refuseFilePods(api, name);
  const { metadata, spec } = found.namespace;
  const identity: NewNamespace = {
    name,
    uid: metadata.uid,
    createdAt: Date.parse(metadata.creationTimestamp),
    object: { metadata: { labels: metadata.labels, ...(metadata.annotations && { annotations: metadata.annotations }) }, spec },
  };
  const now = api.clock.now();
  if (options.dryRun) {
    const row = { ...identity, deletionRequestedAt: metadata.deletionTimestamp ? Date.parse(metadata.deletionTimestamp) : now, deleted: false, revision: found.revision, createdRevision: found.createdRevision };
    return jsonResponse(storedEntry(row).namespace);
  }
  let deleted: StoredNamespace;
  try {
    deleted = writes.namespaces.markDeleting(identity, now, () => deleteContent(api, writes, name));
  } catch (error) {
    if (error instanceof ApiPodWriteError) throw storeRefusal(error);
    throw error;
  }
  writes.changed();
  return jsonResponse(storedEntry(deleted).namespace);
}

/** The namespace controller's part: each API pod not yet Terminating is deleted with its own grace, its ConfigMaps, Secrets and ServiceAccounts at once. */
function deleteContent(api: ApiContext, writes: PodWrites, namespace: string): void {
  for (const pod of writes.store.list()) {
    if (pod.namespace === namespace && !pod.deletion) deleteApiPod(api, writes, pod);
  }
  writes.objects.deleteNamespace(namespace);
}

/** A namespace holding manifest files' pods stays: 405 naming the files, one cause per pod. */
function refuseFilePods(api: ApiContext, namespace: string): void {
  const causes: StatusCause[] = [];
  const files = new Set<string>();
  for (const row of api.store.livePods({ namespace })) {
    const spec = api.store.podRecord(row.uid)?.spec;
    if (!spec || spec.api) continue;
    files.add(spec.source);
    causes.push({ message: `pod ${row.name} comes from the manifest file ${spec.source}` });
  }
  if (files.size === 0) return;
  const list = [...files].sort().join(", ");
  throw new ApiError(405, "MethodNotAllowed", `namespace ${namespace} holds pods from manifest files (${list}): remove the files to delete their pods, then delete the namespace`, {
    name: namespace,
    kind: "namespaces",
    causes,
  });
}

function nameCauses(name: string): StatusCause[] {
  if (name === "") return [{ reason: "FieldValueRequired", message: "Required value: name or generateName is required", field: "metadata.name" }];
  if (checkDns1123Label(name) === undefined) return [];
  const why = name.length > 63 ? "must be no more than 63 characters" : DNS1123_LABEL_MESSAGE;
  return [{ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(name)}: ${why}`, field: "metadata.name" }];
}
