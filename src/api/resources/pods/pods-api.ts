/**
 * GET pods: the list (all namespaces or one), one pod, and its /status, as PodList/Pod JSON or as
 * a Table whose cells come from our printer, so `kubectl get pods` prints the READY, STATUS and
 * RESTARTS that `minikubelet get pods` prints. Only live pods are served: refused manifest files
 * are not pods to the API, and deleted incarnations are history.
 */
import { printPodRow } from "../../../printers/pod-printer.ts";
import type { V1Pod } from "../../../v1/v1.ts";
import type { PodRow } from "../../../store/queries.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { listRevision, page, pageRequest } from "../../http/paging.ts";
import { exactField, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, type FieldSelector } from "../../http/selectors.ts";
import { ApiError } from "../../http/status.ts";
import { column, includeObject, jsonResponse, rowObject, tableResponse, tableVersion, type TableColumn, type TableVersion } from "../../http/table.ts";

/** The field labels the API server accepts for pods (pkg/registry/core/pod, ToSelectableFields). */
export const POD_FIELDS = [
  "metadata.name",
  "metadata.namespace",
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.schedulerName",
  "spec.serviceAccountName",
  "spec.hostNetwork",
  "status.phase",
  "status.podIP",
  "status.nominatedNodeName",
] as const;

/** The API server's pod columns (pkg/printers/internalversion, podColumnDefinitions). */
export const POD_COLUMNS: TableColumn[] = [
  column("Name", "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", { format: "name" }),
  column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
  column("Status", "The aggregate status of the containers in this pod."),
  column("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
  column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"),
  column("IP", "The IP address assigned to the pod", { wide: true }),
  column("Node", "The name of the node the pod is assigned to", { wide: true }),
  column("Nominated Node", "The name of the node the pod is nominated to", { wide: true }),
  column("Readiness Gates", "The readiness gates of the pod", { wide: true }),
];

/** The pod as the API serves it: kind and apiVersion set, resourceVersion from its row's revision. */
export function apiPod(row: PodRow): V1Pod {
  return { ...row.object, apiVersion: "v1", kind: "Pod", metadata: { ...row.object.metadata, resourceVersion: String(row.revision) } };
}

/** The value of a pod field label, as the API server's selectable fields give it. */
export function podField(pod: V1Pod, field: string): string {
  const spec = pod.spec as V1Pod["spec"] & { schedulerName?: string; serviceAccountName?: string; hostNetwork?: boolean };
  switch (field) {
    case "metadata.name":
      return pod.metadata.name;
    case "metadata.namespace":
      return pod.metadata.namespace ?? "default";
    case "spec.nodeName":
      return spec.nodeName ?? "";
    case "spec.restartPolicy":
      return spec.restartPolicy ?? "";
    case "spec.schedulerName":
      return spec.schedulerName ?? "";
    case "spec.serviceAccountName":
      return spec.serviceAccountName ?? "";
    case "spec.hostNetwork":
      return String(spec.hostNetwork ?? false);
    case "status.phase":
      return pod.status?.phase ?? "";
    case "status.podIP":
      return pod.status?.podIP ?? "";
    case "status.nominatedNodeName":
      return pod.status?.nominatedNodeName ?? "";
    default:
      return "";
  }
}

/** Table rows for `pods`, cells from the printer at `now`. */
export function podTableRows(pods: V1Pod[], now: number, request: ApiRequest, version: TableVersion) {
  const include = includeObject(request.query);
  return pods.map((pod) => {
    const row = printPodRow(pod, now);
    const object = rowObject(pod, include, version);
    return { cells: [row.name, row.ready, row.status, row.restarts, row.age, row.ip, row.node, row.nominatedNode, row.readinessGates], ...(object && { object }) };
  });
}

/** The `labelSelector` and `fieldSelector` of a pods request: the fields, and one pod's match (the list's and the watch's). */
export function podSelector(query: URLSearchParams): { fields: FieldSelector; matches: (pod: V1Pod) => boolean } {
  const labels = parseLabelSelector(query.get("labelSelector"));
  const fields = parseFieldSelector(query.get("fieldSelector"), POD_FIELDS);
  return { fields, matches: (pod) => matchesLabels(labels, pod.metadata.labels) && matchesFields(fields, (field) => podField(pod, field)) };
}

/** The collection as a list; api-watch wraps it to serve `?watch=true` on the same path. */
export function listPods(request: ApiRequest, api: ApiContext): Response {
  const { fields, matches } = podSelector(request.query);
  const paging = pageRequest(request.query, api.limits);
  const version = tableVersion(request.headers);
  const namespace = request.params.namespace ?? exactField(fields, "metadata.namespace");
  const name = exactField(fields, "metadata.name");
  // The revision first: a list is at least as new as the resourceVersion it reports.
  const revision = listRevision(request.query, api.store.revision());
  const rows = api.store.livePods({ ...(namespace !== undefined && { namespace }), ...(name !== undefined && { name }) });
  const pods = rows.map(apiPod).filter(matches);
  const served = page(pods, (pod) => `${pod.metadata.namespace}/${pod.metadata.name}`, paging, revision);
  const metadata = { resourceVersion: String(revision), ...(served.continueToken && { continue: served.continueToken, remainingItemCount: served.remainingItemCount }) };
  if (version) {
    return tableResponse({ kind: "Table", apiVersion: version, metadata, columnDefinitions: POD_COLUMNS, rows: podTableRows(served.items, api.clock.now(), request, version) });
  }
  return jsonResponse({ kind: "PodList", apiVersion: "v1", metadata, items: served.items });
}

export function getPod(request: ApiRequest, api: ApiContext): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  const row = api.store.livePods({ namespace, name })[0];
  if (!row) throw ApiError.notFound("pods", name);
  const pod = apiPod(row);
  const version = tableVersion(request.headers);
  if (!version) return jsonResponse(pod);
  return tableResponse({
    kind: "Table",
    apiVersion: version,
    metadata: { resourceVersion: pod.metadata.resourceVersion! },
    columnDefinitions: POD_COLUMNS,
    rows: podTableRows([pod], api.clock.now(), request, version),
  });
}

export const podRoutes: Route[] = [
  { method: "GET", path: "/api/v1/pods", handle: listPods },
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods", handle: listPods },
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods/:name", handle: getPod },
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods/:name/status", handle: getPod },
];
