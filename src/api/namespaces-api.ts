/**
 * GET namespaces: those holding a live pod, plus `default` and `kube-node-lease` (the node's
 * lease), which always exist on an API server. kubectl asks for the namespace after a 404 on a pod
 * in one other than default, and prints `namespaces "x" not found` when it does not exist.
 */
import { statSync } from "node:fs";
import { timestampSince } from "../status/age.ts";
import { databaseIdentity } from "../store/identity.ts";
import { isoTime } from "../status/time.ts";
import type { ApiContext } from "./context.ts";
import type { ApiRequest, Route } from "./http.ts";
import { listRevision } from "./paging.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.ts";
import { ApiError } from "./status.ts";
import { column, includeObject, jsonResponse, rowObject, tableResponse, tableVersion, type TableColumn } from "./table.ts";
import { stableUid } from "../stable-uid.ts";

const ALWAYS = ["default", "kube-node-lease"];
export const NAMESPACE_FIELDS = ["metadata.name", "status.phase"] as const;

export const NAMESPACE_COLUMNS: TableColumn[] = [
  column("Name", "Name must be unique within a namespace.", { format: "name" }),
  column("Status", "The status of the namespace"),
  column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created."),
];

interface V1Namespace {
  kind: "Namespace";
  apiVersion: "v1";
  metadata: { name: string; uid: string; resourceVersion: string; creationTimestamp: string; labels: Record<string, string> };
  spec: { finalizers: string[] };
  status: { phase: "Active" };
}

function namespaces(api: ApiContext, revision: number): V1Namespace[] {
  const names = new Set([...ALWAYS, ...api.store.livePodCounts().keys()]);
  const stat = statSync(api.dbPath);
  const createdAt = isoTime(stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs);
  return [...names].sort().map((name) => ({
    kind: "Namespace",
    apiVersion: "v1",
    metadata: { name, uid: stableUid(`${databaseIdentity(api.store.db)}/namespace/${name}`), resourceVersion: String(revision), creationTimestamp: createdAt, labels: { "kubernetes.io/metadata.name": name } },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  }));
}

function respond(items: V1Namespace[], request: ApiRequest, api: ApiContext, resourceVersion: string, single: boolean): Response {
  const version = tableVersion(request.headers);
  if (!version) return jsonResponse(single ? items[0] : { kind: "NamespaceList", apiVersion: "v1", metadata: { resourceVersion }, items });
  const include = includeObject(request.query);
  const now = api.clock.now();
  const rows = items.map((namespace) => {
    const object = rowObject(namespace, include, version);
    return { cells: [namespace.metadata.name, namespace.status.phase, timestampSince(namespace.metadata.creationTimestamp, now)], ...(object && { object }) };
  });
  return tableResponse({ kind: "Table", apiVersion: version, metadata: { resourceVersion }, columnDefinitions: NAMESPACE_COLUMNS, rows });
}

function listNamespaces(request: ApiRequest, api: ApiContext): Response {
  const labels = parseLabelSelector(request.query.get("labelSelector"));
  const fields = parseFieldSelector(request.query.get("fieldSelector"), NAMESPACE_FIELDS);
  const revision = listRevision(request.query, api.store.revision());
  const items = namespaces(api, revision).filter(
    (namespace) => matchesLabels(labels, namespace.metadata.labels) && matchesFields(fields, (field) => (field === "metadata.name" ? namespace.metadata.name : namespace.status.phase)),
  );
  return respond(items, request, api, String(revision), false);
}

function getNamespace(request: ApiRequest, api: ApiContext): Response {
  const name = request.params.name!;
  const revision = api.store.revision();
  const namespace = namespaces(api, revision).find((n) => n.metadata.name === name);
  if (!namespace) throw ApiError.notFound("namespaces", name);
  return respond([namespace], request, api, String(revision), true);
}

export const namespaceRoutes: Route[] = [
  { method: "GET", path: "/api/v1/namespaces", handle: listNamespaces },
  { method: "GET", path: "/api/v1/namespaces/:name", handle: getNamespace },
];
