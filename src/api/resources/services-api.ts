/**
 * Services, read-only and empty: the agent runs pods without a service network (no cluster IPs, no
 * kube-proxy, no DNS), so it has no services to serve, but clients ask for them: `kubectl
 * cluster-info` lists kube-system's `kubernetes.io/cluster-service=true` services after naming the
 * control plane, and `kubectl get all` lists services with the pods. The list, the watch (which
 * stays open and quiet) and the get (NotFound) answer as an API server without services would;
 * every write is the API server's 405 for a verb a resource does not support.
 */
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Method, Route } from "../http/http.ts";
import { listRevision, pageRequest } from "../http/paging.ts";
import { parseFieldSelector, parseLabelSelector } from "../http/selectors.ts";
import { ApiError } from "../http/status.ts";
import { column, includeObject, jsonResponse, tableResponse, tableVersion, type TableColumn } from "../http/table.ts";
import type { WatchKind } from "../watch/watch-kind.ts";
import { isWatchRequest, serveWatch } from "../watch/watch.ts";

/** The field labels the API server accepts for services (ServiceSelectableFields). */
export const SERVICE_FIELDS = ["metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"] as const;

/** The API server's service columns (pkg/printers/internalversion, serviceColumnDefinitions). */
export const SERVICE_COLUMNS: TableColumn[] = [
  column("Name", "Name must be unique within a namespace.", { format: "name" }),
  column("Type", "The type of service."),
  column("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly."),
  column("External-IP", "One or more external IP addresses this service is reachable on."),
  column("Port(s)", "The list of ports that are exposed by this service."),
  column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created."),
  column("Selector", "Route service traffic to pods with label keys and values matching this selector.", { wide: true }),
];

/** A list or watch request's selectors and options, checked as for any resource: a bad one is its 400 even with nothing to select. */
function checkQuery(request: ApiRequest, api: ApiContext): void {
  parseLabelSelector(request.query.get("labelSelector"));
  parseFieldSelector(request.query.get("fieldSelector"), SERVICE_FIELDS);
  pageRequest(request.query, api.limits);
  if (tableVersion(request.headers)) includeObject(request.query);
}

export const serviceKind: WatchKind = {
  resource: "services",
  kind: "Service",
  mutableFields: false,
  matcher: (request) => {
    parseLabelSelector(request.query.get("labelSelector"));
    parseFieldSelector(request.query.get("fieldSelector"), SERVICE_FIELDS);
    return () => true;
  },
  current: () => [],
  changedSince: () => [],
  columns: SERVICE_COLUMNS,
  row: () => {
    throw new Error("there are no services to print");
  },
};

function listServices(request: ApiRequest, api: ApiContext): Response {
  if (isWatchRequest(request.query)) return serveWatch(request, api, serviceKind);
  checkQuery(request, api);
  const metadata = { resourceVersion: String(listRevision(request.query, api.store.revision())) };
  const version = tableVersion(request.headers);
  if (version) return tableResponse({ kind: "Table", apiVersion: version, metadata, columnDefinitions: SERVICE_COLUMNS, rows: [] });
  return jsonResponse({ kind: "ServiceList", apiVersion: "v1", metadata, items: [] });
}

function refuse(action: string): Route["handle"] {
  return () => {
    throw ApiError.methodNotSupported("services", action);
  };
}

const ONE = "/api/v1/namespaces/:namespace/services/:name";
const changes: [Method, string][] = [
  ["PUT", "update"],
  ["PATCH", "patch"],
  ["DELETE", "delete"],
];

export const serviceRoutes: Route[] = [
  { method: "GET", path: "/api/v1/services", handle: listServices },
  { method: "GET", path: "/api/v1/namespaces/:namespace/services", handle: listServices },
  { method: "GET", path: ONE, handle: (request) => { throw ApiError.notFound("services", request.params.name!); } },
  { method: "POST", path: "/api/v1/namespaces/:namespace/services", handle: refuse("create") },
  { method: "DELETE", path: "/api/v1/namespaces/:namespace/services", handle: refuse("deletecollection") },
  ...changes.map(([method, action]): Route => ({ method, path: ONE, handle: refuse(action) })),
  ...changes.map(([method, action]): Route => ({ method, path: `${ONE}/status`, handle: refuse(action) })),
];
