/**
 * ConfigMaps, Secrets and ServiceAccounts (object-kinds.ts), as the API server's generic registry
 * serves them: list (one namespace or all) and watch, get, create, update, the four patches, and
 * delete. A write is decoded (unknown fields warned of, or refused under fieldValidation=Strict),
 * validated in the API server's words, and stored in one transaction with its revision
 * (store/object-store.ts); the 201 or 200 answers what was committed. Under `serve` writes are
 * refused: the database is the agent's. A Secret's values appear in no message.
 */
import { randomUUID } from "node:crypto";
import { isPlainObject } from "../../../manifest/fields.ts";
import { liveObject, liveObjects, objectsChangedSince } from "../../../store/object-reads.ts";
import { ObjectWriteError, type ObjectKey, type StoredObject, type SqliteObjectStore } from "../../../store/object-store.ts";
import { isoTime } from "../../../v1/time.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { listRevision, page, pageRequest } from "../../http/paging.ts";
import { decodeBody } from "../../http/request-body.ts";
import { decodeRequestObject } from "../../http/request-object.ts";
import { exactField, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "../../http/selectors.ts";
import { ApiError, type StatusCause } from "../../http/status.ts";
import { includeObject, jsonResponse, rowObject, tableResponse, tableVersion, type TableRow, type TableVersion } from "../../http/table.ts";
import { patchKind } from "../../patch/apply-patch.ts";
import { PatchSchema } from "../../patch/patch-schema.ts";
import { isObject, type JsonObject } from "../../patch/json.ts";
import type { WatchChange, WatchKind, WatchObject } from "../../watch/watch-kind.ts";
import { isWatchRequest, serveWatch } from "../../watch/watch.ts";
import { admitCreateIn } from "../namespaces/namespace-lifecycle.ts";
import { clientMetadata, createdName, creationTime, stringMap } from "../object-meta.ts";
import { deleteOptions } from "../delete-options.ts";
import { fieldValidation, isDryRun } from "../pods/pod-write-status.ts";
import { expectedResourceVersion, patchedPod } from "../pods/pod-write-target.ts";
import { OBJECT_KINDS, type ObjectKind } from "./object-kinds.ts";

type Json = Record<string, unknown>;

/** The object as the API serves it: apiVersion and kind set, resourceVersion the row's revision. */
export function servedObject(kind: ObjectKind, stored: StoredObject): WatchObject {
  const { metadata, ...rest } = stored.object;
  return { apiVersion: "v1", kind: kind.kind, metadata: { ...(metadata as Json), resourceVersion: String(stored.revision) }, ...rest } as unknown as WatchObject;
}

function selector(kind: ObjectKind, query: URLSearchParams) {
  const labels = parseLabelSelector(query.get("labelSelector"));
  const fields = parseFieldSelector(query.get("fieldSelector"), kind.selectableFields);
  return { fields, matches: (object: WatchObject) => matchesLabels(labels, object.metadata.labels) && matchesFields(fields, (field) => kind.fieldValue(object, field)) };
}

function tableRows(kind: ObjectKind, objects: WatchObject[], now: number, request: ApiRequest, version: TableVersion): TableRow[] {
  const include = includeObject(request.query);
  return objects.map((object) => {
    const full = rowObject(object, include, version);
    return { cells: kind.cells(object, now), ...(full && { object: full }) };
  });
}

function list(kind: ObjectKind, request: ApiRequest, api: ApiContext): Response {
  const { fields, matches } = selector(kind, request.query);
  const paging = pageRequest(request.query, api.limits);
  const version = tableVersion(request.headers);
  const namespace = request.params.namespace ?? exactField(fields, "metadata.namespace");
  const revision = listRevision(request.query, api.store.revision());
  const objects = liveObjects(api.store.db, kind.resource, namespace).map((stored) => servedObject(kind, stored)).filter(matches);
  const served = page(objects, (object) => `${object.metadata.namespace}/${object.metadata.name}`, paging, revision);
  const metadata = { resourceVersion: String(revision), ...(served.continueToken && { continue: served.continueToken, remainingItemCount: served.remainingItemCount }) };
  if (version) return tableResponse({ kind: "Table", apiVersion: version, metadata, columnDefinitions: kind.columns, rows: tableRows(kind, served.items, api.clock.now(), request, version) });
  return jsonResponse({ kind: `${kind.kind}List`, apiVersion: "v1", metadata, items: served.items });
}

function get(kind: ObjectKind, request: ApiRequest, api: ApiContext): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  const stored = liveObject(api.store.db, kind.resource, namespace, name);
  if (!stored) throw ApiError.notFound(kind.resource, name);
  const object = servedObject(kind, stored);
  const version = tableVersion(request.headers);
  if (!version) return jsonResponse(object);
  return tableResponse({ kind: "Table", apiVersion: version, metadata: { resourceVersion: object.metadata.resourceVersion! }, columnDefinitions: kind.columns, rows: tableRows(kind, [object], api.clock.now(), request, version) });
}

/** The agent's object store, or the refusal under `serve`. */
function writable(kind: ObjectKind, api: ApiContext, action: "created" | "changed" | "deleted"): SqliteObjectStore {
  const objects = api.podWrites?.objects;
  if (!objects) throw new ApiError(405, "MethodNotAllowed", `${kind.resource} are ${action} through the agent's API (minikubelet run), not through this server, which only reads its database`, { kind: kind.resource });
  return objects;
}

interface Decoded {
  object: Json;
  warnings: string[];
}

/**
 * The stored form of a submitted object: its fields type-checked (a 400), unknown top-level fields
 * dropped with a warning each or, under Strict, refused; `metadata` as given (the caller sets what
 * the server owns).
 */
function decodeObject(kind: ObjectKind, body: Json, query: URLSearchParams): Decoded {
  const validation = fieldValidation(query);
  const unknown = Object.keys(body).filter((field) => !["apiVersion", "kind", "metadata", ...kind.fields].includes(field));
  if (validation === "Strict" && unknown.length > 0) throw ApiError.badRequest(`strict decoding error: ${unknown.map((field) => `unknown field ${JSON.stringify(field)}`).join(", ")}`);
  if (body.metadata !== undefined && body.metadata !== null && !isPlainObject(body.metadata)) {
    throw ApiError.badRequest(`${kind.kind} in version "v1" cannot be handled as a ${kind.kind}: json: cannot unmarshal ${typeof body.metadata} into Go struct field ${kind.kind}.metadata of type v1.ObjectMeta`);
  }
  const object = kind.decode(body);
  const warnings = validation === "Warn" ? unknown.map((field) => `299 - ${JSON.stringify(`unknown field ${JSON.stringify(field)}`)}`) : [];
  return { object, warnings };
}

/** The metadata a client may set (labels, annotations, owners, finalizers ...), without what only the server sets. */
function clientFields(metadata: Json): Json {
  const { labels, annotations, ...rest } = clientMetadata(metadata);
  const kept: Json = { ...rest };
  delete kept.namespace;
  delete kept.name;
  delete kept.generateName;
  const set = (map: Record<string, string> | undefined) => (map && Object.keys(map).length > 0 ? map : undefined);
  const labelMap = set(stringMap(labels));
  const annotationMap = set(stringMap(annotations));
  return { ...kept, ...(labelMap && { labels: labelMap }), ...(annotationMap && { annotations: annotationMap }) };
}

function invalid(kind: ObjectKind, name: string, causes: StatusCause[]): ApiError {
  return ApiError.invalid(kind.kind, name, causes);
}

function storeRefusal(kind: ObjectKind, error: ObjectWriteError): ApiError {
  const details = { name: error.key.name, kind: kind.resource };
  const code = error.reason === "NotFound" ? 404 : 409;
  return new ApiError(code, error.reason, error.message, details);
}

function written(stored: WatchObject, status: number, warnings: string[]): Response {
  const headers = new Headers({ "Content-Type": "application/json" });
  for (const warning of warnings) headers.append("Warning", warning);
  return new Response(JSON.stringify(stored), { status, headers });
}

async function create(kind: ObjectKind, request: ApiRequest, api: ApiContext): Promise<Response> {
  const objects = writable(kind, api, "created");
  const namespace = request.params.namespace!;
  const body = await decodeBody(request, { apiVersion: "v1", kind: kind.kind, internalPackage: "core" });
  const submitted = isPlainObject(body.metadata) ? body.metadata : {};
  if (typeof submitted.namespace === "string" && submitted.namespace !== "" && submitted.namespace !== namespace) {
    throw ApiError.badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  const { object, warnings } = decodeObject(kind, body, request.query);
  const name = createdName(submitted);
  const createdAt = creationTime(api.clock.now());
  const uid = randomUUID();
  object.metadata = { name, namespace, uid, creationTimestamp: isoTime(createdAt), ...clientFields(submitted) };
  const causes = kind.validate(object);
  if (causes.length > 0) throw invalid(kind, name, causes);
  admitCreateIn(api, namespace, kind.resource, name);
  const key: ObjectKey = { resource: kind.resource, namespace, name };
  if (isDryRun(request.query)) {
    if (objects.get(key)) throw ApiError.alreadyExists(kind.resource, name);
    return written(servedObject(kind, { ...key, uid, object, deleted: false, revision: api.store.revision(), createdRevision: api.store.revision() }), 201, warnings);
  }
  try {
    return written(servedObject(kind, objects.create(key, uid, object)), 201, warnings);
  } catch (error) {
    if (error instanceof ObjectWriteError) throw storeRefusal(kind, error);
    throw error;
  }
}

/**
 * Stores `next` (a whole object: PUT's body, or the patched object) over the stored one, if that is
 * still at `expected` (undefined: whatever its revision).
 */
function update(kind: ObjectKind, request: ApiRequest, api: ApiContext, current: StoredObject, next: Json, expected: number | undefined): Response {
  const objects = writable(kind, api, "changed");
  const { name, namespace } = current;
  const metadata = isPlainObject(next.metadata) ? next.metadata : {};
  if (metadata.name !== undefined && metadata.name !== name) {
    throw ApiError.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
  }
  if (metadata.namespace !== undefined && metadata.namespace !== "" && metadata.namespace !== namespace) {
    throw ApiError.badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  if (metadata.uid !== undefined && metadata.uid !== current.uid) {
    throw ApiError.conflict(kind.resource, name, `Precondition failed: UID in precondition: ${String(metadata.uid)}, UID in object meta: ${current.uid}`);
  }
  const { object, warnings } = decodeObject(kind, { ...next, apiVersion: "v1", kind: kind.kind }, request.query);
  const before = current.object;
  const identity = before.metadata as Json;
  object.metadata = { name, namespace, uid: current.uid, creationTimestamp: identity.creationTimestamp, ...clientFields(metadata) };
  const causes = [...kind.validateUpdate(before, object), ...kind.validate(object)];
  if (causes.length > 0) throw invalid(kind, name, causes);
  if (isDryRun(request.query)) return written(servedObject(kind, { ...current, object }), 200, warnings);
  try {
    return written(servedObject(kind, objects.update({ resource: kind.resource, namespace, name }, expected, object)), 200, warnings);
  } catch (error) {
    if (error instanceof ObjectWriteError) throw storeRefusal(kind, error);
    throw error;
  }
}

function stored(kind: ObjectKind, request: ApiRequest, api: ApiContext): StoredObject {
  const { namespace, name } = request.params as { namespace: string; name: string };
  const found = liveObject(api.store.db, kind.resource, namespace, name);
  if (!found) throw ApiError.notFound(kind.resource, name);
  return found;
}

async function replace(kind: ObjectKind, request: ApiRequest, api: ApiContext): Promise<Response> {
  writable(kind, api, "changed");
  const current = stored(kind, request, api);
  const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), kind.kind);
  if (!isObject(body)) throw ApiError.badRequest(`the body of a PUT must be a ${kind.kind} object`);
  return update(kind, request, api, current, body, expectedResourceVersion((body.metadata as Json | undefined)?.resourceVersion));
}

/** How often a PATCH is applied again to an object that changed under it before the 409 is answered. */
const PATCH_ATTEMPTS = 5;

/** A PATCH applies to the newest object; one that carries its own resourceVersion is that precondition. */
async function patch(kind: ObjectKind, request: ApiRequest, api: ApiContext): Promise<Response> {
  writable(kind, api, "changed");
  const body = await request.body();
  for (let attempt = 1; ; attempt++) {
    const found = liveObject(api.store.db, kind.resource, request.params.namespace!, request.params.name!);
    if (!found && patchKind(request.headers.get("content-type")) === "apply") return applyCreate(kind, request, api, body);
    if (!found) throw ApiError.notFound(kind.resource, request.params.name!);
    const next = patchedPod(request, servedObject(kind, found) as unknown as JsonObject, body, PatchSchema.of(`io.k8s.api.core.v1.${kind.kind}`));
    const asked = expectedResourceVersion((next.metadata as Json | undefined)?.resourceVersion);
    const precondition = asked !== undefined && asked !== found.revision ? asked : undefined;
    try {
      return update(kind, request, api, found, next, precondition ?? found.revision);
    } catch (error) {
      const retry = error instanceof ApiError && error.reason === "Conflict" && precondition === undefined && attempt < PATCH_ATTEMPTS;
      if (!retry) throw error;
    }
  }
}

/** Server-side apply of an object that is not there creates it. */
async function applyCreate(kind: ObjectKind, request: ApiRequest, api: ApiContext, body: Uint8Array): Promise<Response> {
  const object = patchedPod(request, { apiVersion: "v1", kind: kind.kind, metadata: { name: request.params.name! } }, body, PatchSchema.of(`io.k8s.api.core.v1.${kind.kind}`));
  const json = new TextEncoder().encode(JSON.stringify(object));
  return create(kind, { ...request, headers: new Headers({ "content-type": "application/json" }), body: async () => json }, api);
}

async function remove(kind: ObjectKind, request: ApiRequest, api: ApiContext): Promise<Response> {
  const objects = writable(kind, api, "deleted");
  const current = stored(kind, request, api);
  const options = await deleteOptions(request);
  if (options.uid !== undefined && options.uid !== current.uid) {
    throw ApiError.conflict(kind.resource, current.name, `Precondition failed: UID in precondition: ${options.uid}, UID in object meta: ${current.uid}`);
  }
  if (options.resourceVersion !== undefined && options.resourceVersion !== String(current.revision)) {
    throw ApiError.conflict(kind.resource, current.name, `Precondition failed: ResourceVersion in precondition: ${options.resourceVersion}, ResourceVersion in object meta: ${current.revision}`);
  }
  if (options.dryRun) return jsonResponse(servedObject(kind, current));
  try {
    return jsonResponse(servedObject(kind, objects.delete({ resource: kind.resource, namespace: current.namespace, name: current.name }, options.uid)));
  } catch (error) {
    if (error instanceof ObjectWriteError) throw storeRefusal(kind, error);
    throw error;
  }
}

function change(kind: ObjectKind, stored: StoredObject): WatchChange {
  return { key: stored.uid, revision: stored.revision, createdRevision: stored.createdRevision, deleted: stored.deleted, namespace: stored.namespace, object: servedObject(kind, stored) };
}

/** What a watch of the resource serves (watch-kind.ts). */
export function objectWatchKind(kind: ObjectKind): WatchKind {
  return {
    resource: kind.resource,
    kind: kind.kind,
    mutableFields: false,
    matcher: (request) => selector(kind, request.query).matches,
    current: (store, namespace) => liveObjects(store.db, kind.resource, namespace).map((stored) => change(kind, stored)),
    changedSince: (store, revision, limit) => objectsChangedSince(store.db, kind.resource, revision, limit).map((stored) => change(kind, stored)),
    columns: kind.columns,
    row: (object, now, request, version) => tableRows(kind, [object], now, request, version)[0]!,
  };
}

function routesOf(kind: ObjectKind): Route[] {
  const watchKind = objectWatchKind(kind);
  const collection = (request: ApiRequest, api: ApiContext) => (isWatchRequest(request.query) ? serveWatch(request, api, watchKind) : list(kind, request, api));
  const base = `/api/v1/namespaces/:namespace/${kind.resource}`;
  return [
    { method: "GET", path: `/api/v1/${kind.resource}`, handle: collection },
    { method: "GET", path: base, handle: collection },
    { method: "POST", path: base, handle: (request, api) => create(kind, request, api) },
    { method: "GET", path: `${base}/:name`, handle: (request, api) => get(kind, request, api) },
    { method: "PUT", path: `${base}/:name`, handle: (request, api) => replace(kind, request, api) },
    { method: "PATCH", path: `${base}/:name`, handle: (request, api) => patch(kind, request, api) },
    { method: "DELETE", path: `${base}/:name`, handle: (request, api) => remove(kind, request, api) },
  ];
}

export const configObjectRoutes: Route[] = OBJECT_KINDS.flatMap(routesOf);
