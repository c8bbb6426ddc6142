/**
 * metrics.k8s.io/v1beta1, as metrics-server serves it: NodeMetrics and PodMetrics drawn from the
 * stats collector (CPU as the rate over the window between its last two readings, memory as the
 * working set), for `kubectl top node` and `kubectl top pod [--containers]`. As in metrics-server,
 * only Running pods whose every measured container has a window are listed, in namespace then
 * name order, chosen by the pods' own labels and fields; a pod or node without figures yet is a
 * NotFound on the metrics resource. Under `serve` (no collector) the lists are empty.
 */
import { goDuration } from "../../printers/go-duration.ts";
import { isoTime } from "../../v1/time.ts";
import type { V1Pod } from "../../v1/v1.ts";
import type { ContainerUsageWindow, UsageWindow } from "../../stats/stats-source.ts";
import { parseQuantity, Quantity } from "../../manifest/quantity.ts";
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { currentNode } from "./nodes-api.ts";
import { apiPod, podSelector } from "./pods/pods-api.ts";
import { exactField, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "../http/selectors.ts";
import { ApiError } from "../http/status.ts";
import { includeObject, jsonResponse, rowObject, tableResponse, tableVersion, type TableColumn, type TableVersion } from "../http/table.ts";

const GROUP = "metrics.k8s.io";
const API_VERSION = `${GROUP}/v1beta1`;
const PREFIX = `/apis/${API_VERSION}`;

interface Usage {
  cpu: string;
  memory: string;
}

/** cpu in nanocores (DecimalSI, scale -9) and memory in bytes (BinarySI), as metrics-server builds them. */
function usage(window: Pick<UsageWindow, "cpuNanoCores" | "memoryBytes">): Usage {
  return { cpu: new Quantity(BigInt(window.cpuNanoCores), "DecimalSI").toString(), memory: new Quantity(BigInt(window.memoryBytes) * 1_000_000_000n, "BinarySI").toString() };
}

function nodeMetrics(api: ApiContext, node: ReturnType<typeof currentNode>) {
  const window = api.metrics?.nodeUsage();
  if (!window) return undefined;
  return {
    kind: "NodeMetrics",
    apiVersion: API_VERSION,
    metadata: { name: node.metadata.name, creationTimestamp: isoTime(api.clock.now()), labels: node.metadata.labels },
    timestamp: isoTime(window.timestamp),
    window: goDuration(window.windowMs),
    usage: usage(window),
  };
}

function podMetrics(api: ApiContext, pod: V1Pod) {
  if (pod.status?.phase !== "Running") return undefined;
  const containers: ContainerUsageWindow[] | undefined = api.metrics?.podUsage(pod.metadata.uid ?? "");
  if (!containers) return undefined;
  // The pod's time is its earliest container's, with that container's window (metrics-server's choice).
  const earliest = containers.reduce((a, b) => (b.timestamp < a.timestamp ? b : a));
  return {
    kind: "PodMetrics",
    apiVersion: API_VERSION,
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, creationTimestamp: isoTime(api.clock.now()), ...(pod.metadata.labels && Object.keys(pod.metadata.labels).length > 0 && { labels: pod.metadata.labels }) },
    timestamp: isoTime(earliest.timestamp),
    window: goDuration(earliest.windowMs),
    containers: containers.map((container) => ({ name: container.name, usage: usage(container) })),
  };
}

type Metrics = NonNullable<ReturnType<typeof nodeMetrics>> | NonNullable<ReturnType<typeof podMetrics>>;

const COLUMNS: TableColumn[] = [
  { name: "Name", type: "string", format: "name", description: "Name of the resource", priority: 0 },
  { name: "cpu", type: "string", format: "quantity", description: "", priority: 0 },
  { name: "memory", type: "string", format: "quantity", description: "", priority: 0 },
  { name: "Window", type: "string", format: "duration", description: "", priority: 0 },
];

/** metrics-server's table: a pod's row sums its containers. */
function cells(item: Metrics): string[] {
  const total = "usage" in item ? item.usage : sumUsage(item.containers.map((c) => c.usage));
  return [item.metadata.name!, total.cpu, total.memory, item.window];
}

function sumUsage(usages: Usage[]): Usage {
  const add = (pick: (u: Usage) => string, format: "DecimalSI" | "BinarySI") => usages.reduce((sum, u) => sum.add(parseQuantity(pick(u))), Quantity.zero(format)).toString();
  return { cpu: add((u) => u.cpu, "DecimalSI"), memory: add((u) => u.memory, "BinarySI") };
}

function respond(request: ApiRequest, items: Metrics[], list: "NodeMetricsList" | "PodMetricsList" | undefined): Response {
  const version: TableVersion | undefined = tableVersion(request.headers);
  if (version) {
    const include = includeObject(request.query);
    const rows = items.map((item) => {
      const object = rowObject(item, include, version);
      return { cells: cells(item), ...(object && { object }) };
    });
    return tableResponse({ kind: "Table", apiVersion: version, metadata: { resourceVersion: "" }, columnDefinitions: COLUMNS, rows });
  }
  return jsonResponse(list ? { kind: list, apiVersion: API_VERSION, metadata: {}, items } : items[0]);
}

function listNodeMetrics(request: ApiRequest, api: ApiContext): Response {
  const labels = parseLabelSelector(request.query.get("labelSelector"));
  const fields = parseFieldSelector(request.query.get("fieldSelector"), ["metadata.name"]);
  const node = currentNode(api);
  const chosen = matchesLabels(labels, node.metadata.labels) && matchesFields(fields, () => node.metadata.name);
  const metrics = chosen ? nodeMetrics(api, node) : undefined;
  return respond(request, metrics ? [metrics] : [], "NodeMetricsList");
}

function getNodeMetrics(request: ApiRequest, api: ApiContext): Response {
  const name = request.params.name!;
  if (name !== api.nodeName) throw ApiError.notFound("nodes", name);
  const metrics = nodeMetrics(api, currentNode(api));
  if (!metrics) throw ApiError.notFound("nodes", name, GROUP);
  return respond(request, [metrics], undefined);
}

function listPodMetrics(request: ApiRequest, api: ApiContext): Response {
  const { fields, matches } = podSelector(request.query);
  const namespace = request.params.namespace ?? exactField(fields, "metadata.namespace");
  const pods = api.store
    .livePods(namespace !== undefined ? { namespace } : {})
    .map(apiPod)
    .filter(matches)
    .sort((a, b) => (a.metadata.namespace! + "\u0000" + a.metadata.name! < b.metadata.namespace! + "\u0000" + b.metadata.name! ? -1 : 1));
  return respond(request, pods.flatMap((pod) => podMetrics(api, pod) ?? []), "PodMetricsList");
}

function getPodMetrics(request: ApiRequest, api: ApiContext): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  const row = api.store.livePods({ namespace, name })[0];
  if (!row) throw ApiError.notFound("pods", name);
  const metrics = podMetrics(api, apiPod(row));
  if (!metrics) throw ApiError.notFound("pods", `${namespace}/${name}`, GROUP);
  return respond(request, [metrics], undefined);
}

export const metricsRoutes: Route[] = [
  { method: "GET", path: `${PREFIX}/nodes`, handle: listNodeMetrics },
  { method: "GET", path: `${PREFIX}/nodes/:name`, handle: getNodeMetrics },
  { method: "GET", path: `${PREFIX}/pods`, handle: listPodMetrics },
  { method: "GET", path: `${PREFIX}/namespaces/:namespace/pods`, handle: listPodMetrics },
  { method: "GET", path: `${PREFIX}/namespaces/:namespace/pods/:name`, handle: getPodMetrics },
];
