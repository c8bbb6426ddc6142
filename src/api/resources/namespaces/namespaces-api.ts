/**
 * The namespaces resource: the list (a watch when the query asks for one), one namespace, and the
 * writes (namespaces-write.ts). The namespaces themselves are drawn in namespace-objects.ts; kubectl
 * also asks for one after a 404 on a pod in it, to say `namespaces "x" not found`.
 */
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { currentNamespaces, findNamespace, type V1Namespace } from "./namespace-objects.ts";
import { NAMESPACE_COLUMNS, namespaceRow, namespaceSelector } from "./namespace-table.ts";
import { namespaceKind } from "./namespace-watch.ts";
import { createNamespace, deleteNamespace } from "./namespaces-write.ts";
import { listRevision, page, pageRequest } from "../../http/paging.ts";
import { ApiError } from "../../http/status.ts";
import { jsonResponse, tableResponse, tableVersion } from "../../http/table.ts";
import { isWatchRequest, serveWatch } from "../../watch/watch.ts";

function respond(items: V1Namespace[], request: ApiRequest, api: ApiContext, metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }, single: boolean): Response {
  const version = tableVersion(request.headers);
  if (!version) return jsonResponse(single ? items[0] : { kind: "NamespaceList", apiVersion: "v1", metadata, items });
  const now = api.clock.now();
  return tableResponse({ kind: "Table", apiVersion: version, metadata, columnDefinitions: NAMESPACE_COLUMNS, rows: items.map((namespace) => namespaceRow(namespace, now, request, version)) });
}

function listNamespaces(request: ApiRequest, api: ApiContext): Response {
  const matches = namespaceSelector(request.query);
  const paging = pageRequest(request.query, api.limits);
  // The revision first: a list is at least as new as the resourceVersion it reports.
  const revision = listRevision(request.query, api.store.revision());
  const items = currentNamespaces(api.store, revision).map((entry) => entry.namespace).filter(matches);
  const served = page(items, (namespace) => namespace.metadata.name, paging, revision);
  const metadata = { resourceVersion: String(revision), ...(served.continueToken && { continue: served.continueToken, remainingItemCount: served.remainingItemCount }) };
  return respond(served.items, request, api, metadata, false);
}

function getNamespace(request: ApiRequest, api: ApiContext): Response {
  const name = request.params.name!;
  const found = findNamespace(api.store, name, api.store.revision());
  if (!found) throw ApiError.notFound("namespaces", name);
  return respond([found.namespace], request, api, { resourceVersion: found.namespace.metadata.resourceVersion }, true);
}

/** Namespaces are changed by deleting and creating them here; the API server's update and patch are not served. */
const refuseChange = (action: string) => () => {
  throw ApiError.methodNotSupported("namespaces", action);
};

export const namespaceRoutes: Route[] = [
  { method: "GET", path: "/api/v1/namespaces", handle: (request, api) => (isWatchRequest(request.query) ? serveWatch(request, api, namespaceKind) : listNamespaces(request, api)) },
  { method: "GET", path: "/api/v1/namespaces/:name", handle: getNamespace },
  { method: "POST", path: "/api/v1/namespaces", handle: createNamespace },
  { method: "DELETE", path: "/api/v1/namespaces/:name", handle: deleteNamespace },
  { method: "PUT", path: "/api/v1/namespaces/:name", handle: refuseChange("update") },
  { method: "PATCH", path: "/api/v1/namespaces/:name", handle: refuseChange("patch") },
];
