/**
 * GET nodes (the one node this agent is) and its kube-node-lease Lease, so `kubectl get nodes -o
 * wide` and `kubectl describe node` (which reads the lease and lists the node's pods) work.
 */
import { statSync } from "node:fs";
import { timestampSince } from "../../printers/age.ts";
import { isoTime, microTime } from "../../v1/time.ts";
import { databaseIdentity } from "../../store/identity.ts";
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { containerRuntimeVersion, nodeObject, readHostFacts, type NodeOptions } from "../../node/node-object.ts";
import { LEASE_DURATION_SECONDS, LEASE_NAMESPACE } from "../../node/node-lease.ts";
import { NOTHING_RESERVED, parseReserved, type NodeReservations } from "../../eviction/node-allocatable.ts";
import { parseEvictionHard } from "../../eviction/thresholds.ts";
import { readNodeStatus } from "../../store/node-status.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "../http/selectors.ts";
import { ApiError } from "../http/status.ts";
import { stableUid } from "../../v1/stable-uid.ts";
import { column, includeObject, jsonResponse, rowObject, tableResponse, tableVersion, type TableColumn } from "../http/table.ts";

export const NODE_FIELDS = ["metadata.name", "spec.unschedulable"] as const;

export const NODE_COLUMNS: TableColumn[] = [
  column("Name", "Name must be unique within a namespace.", { format: "name" }),
  column("Status", "The status of the node"),
  column("Roles", "The roles of the node"),
  column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created."),
  column("Version", "Kubelet Version reported by the node."),
  column("Internal-IP", "List of internal IPs in the node.", { wide: true }),
  column("External-IP", "List of external IPs in the node.", { wide: true }),
  column("OS-Image", "OS image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", { wide: true }),
  column("Kernel-Version", "Kernel version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", { wide: true }),
  column("Container-Runtime", "Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).", { wide: true }),
];


type Node = ReturnType<typeof nodeObject> & { metadata: { name: string; uid: string; creationTimestamp: string; resourceVersion?: string; labels: Record<string, string> } };

/** The node as of now: facts read from the host on every request (they are cheap and live). */
export function currentNode(api: ApiContext): Node {
  const createdAt = databaseCreatedAt(api.dbPath);
  const heartbeatAt = api.runtime ? api.clock.now() : (api.store.lastUpdateAt() ?? createdAt);
  const node = nodeObject(readHostFacts(api.dbPath), {
    name: api.nodeName,
    uid: nodeUid(api),
    createdAt,
    heartbeatAt,
    liveness: api.runtime ? "running" : "not-serving",
    containerRuntimeVersion: containerRuntimeVersion(api.runtime?.name ?? recordedRuntime(api)),
    ...recordedNode(api),
    maxPods: api.maxPods,
    ...(api.plegHealth && { pleg: api.plegHealth() }),
    kubeletPort: api.kubelet?.()?.port,
  }) as Node;
  node.metadata.resourceVersion = String(api.store.revision());
  return node;
}

/**
 * What the agent recorded about the node (its flags, its DiskPressure verdict); a database no
 * agent of this version ran on gets the kubelet's defaults and pressure read from the host.
 */
function recordedNode(api: ApiContext): Pick<NodeOptions, "reservations" | "diskPressure"> {
  const recorded = readNodeStatus(api.store.db);
  const held = api.diskPressure?.();
  if (!recorded) return { reservations: DEFAULT_RESERVATIONS, ...(held && { diskPressure: held }) };
  // The agent's own verdict first: the database may not have been able to take it (a full disk).
  const diskPressure = held ?? { pressure: recorded.diskPressure, since: recorded.diskPressureSince };
  try {
    return {
      reservations: {
        evictionHard: parseEvictionHard(recorded.evictionHard),
        systemReserved: parseReserved("system-reserved", recorded.systemReserved),
        kubeReserved: parseReserved("kube-reserved", recorded.kubeReserved),
      },
      diskPressure,
    };
  } catch {
    // Written by the agent from flags it had parsed; a hand-edited row is not worth failing the node for.
    return { reservations: DEFAULT_RESERVATIONS, diskPressure };
  }
}

const DEFAULT_RESERVATIONS: NodeReservations = { evictionHard: parseEvictionHard(""), systemReserved: NOTHING_RESERVED, kubeReserved: NOTHING_RESERVED };

/** A UUID stable for this database and node name. */
export function nodeUid(api: ApiContext): string {
  return stableUid(`${databaseIdentity(api.store.db)}/node/${api.nodeName}`);
}

function databaseCreatedAt(dbPath: string): number {
  const stat = statSync(dbPath);
  return stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs;
}

/** Under `serve` (no runtime), the runtime the recorded containers ran on (their containerID scheme). */
function recordedRuntime(api: ApiContext): string {
  for (const row of api.store.livePods()) {
    const statuses = [...(row.object.status?.containerStatuses ?? []), ...(row.object.status?.initContainerStatuses ?? [])];
    const scheme = statuses.map((s) => s.containerID?.split("://")[0]).find(Boolean);
    if (scheme) return scheme;
  }
  return "process";
}

export function nodeCells(node: Node, now: number): string[] {
  const status = node.status as { conditions: { type: string; status: string }[]; addresses: { type: string; address: string }[]; nodeInfo: Record<string, string> };
  const ready = status.conditions.find((c) => c.type === "Ready");
  const address = (type: string) => status.addresses.filter((a) => a.type === type).map((a) => a.address).join(",") || "<none>";
  const roles = Object.keys(node.metadata.labels).filter((l) => l.startsWith("node-role.kubernetes.io/")).map((l) => l.slice("node-role.kubernetes.io/".length));
  return [
    node.metadata.name,
    ready ? (ready.status === "True" ? "Ready" : "NotReady") : "Unknown",
    roles.length > 0 ? roles.sort().join(",") : "<none>",
    timestampSince(node.metadata.creationTimestamp, now),
    status.nodeInfo.kubeletVersion!,
    address("InternalIP"),
    address("ExternalIP"),
    status.nodeInfo.osImage!,
    status.nodeInfo.kernelVersion!,
    status.nodeInfo.containerRuntimeVersion!,
  ];
}

function nodesResponse(nodes: Node[], request: ApiRequest, api: ApiContext, resourceVersion: string, single: boolean): Response {
  const version = tableVersion(request.headers);
  if (!version) return jsonResponse(single ? nodes[0] : { kind: "NodeList", apiVersion: "v1", metadata: { resourceVersion }, items: nodes });
  const include = includeObject(request.query);
  const now = api.clock.now();
  const rows = nodes.map((node) => {
    const object = rowObject(node, include, version);
    return { cells: nodeCells(node, now), ...(object && { object }) };
  });
  return tableResponse({ kind: "Table", apiVersion: version, metadata: { resourceVersion }, columnDefinitions: NODE_COLUMNS, rows });
}

function listNodes(request: ApiRequest, api: ApiContext): Response {
  const labels = parseLabelSelector(request.query.get("labelSelector"));
  const fields = parseFieldSelector(request.query.get("fieldSelector"), NODE_FIELDS);
  const node = currentNode(api);
  const fieldValue = (field: string) => (field === "metadata.name" ? node.metadata.name : "false");
  const nodes = matchesLabels(labels, node.metadata.labels) && matchesFields(fields, fieldValue) ? [node] : [];
  return nodesResponse(nodes, request, api, node.metadata.resourceVersion!, false);
}

function getNode(request: ApiRequest, api: ApiContext): Response {
  const name = request.params.name!;
  if (name !== api.nodeName) throw ApiError.notFound("nodes", name);
  const node = currentNode(api);
  return nodesResponse([node], request, api, node.metadata.resourceVersion!, true);
}

/** The node's heartbeat as a Lease: `describe node` prints its holder and renew time. */
function getLease(request: ApiRequest, api: ApiContext): Response {
  const { namespace, name } = request.params as { namespace: string; name: string };
  if (namespace !== LEASE_NAMESPACE || name !== api.nodeName) {
    throw ApiError.notFound("leases", name, "coordination.k8s.io");
  }
  const createdAt = databaseCreatedAt(api.dbPath);
  const renewAt = api.runtime ? api.clock.now() : (api.store.lastUpdateAt() ?? createdAt);
  return jsonResponse({
    kind: "Lease",
    apiVersion: "coordination.k8s.io/v1",
    metadata: { name, namespace, uid: stableUid(`${nodeUid(api)}/lease`), resourceVersion: String(api.store.revision()), creationTimestamp: isoTime(createdAt) },
    spec: { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(renewAt) },
  });
}

export const nodeRoutes: Route[] = [
  { method: "GET", path: "/api/v1/nodes", handle: listNodes },
  { method: "GET", path: "/api/v1/nodes/:name", handle: getNode },
  { method: "GET", path: "/api/v1/nodes/:name/status", handle: getNode },
  { method: "GET", path: "/apis/coordination.k8s.io/v1/namespaces/:namespace/leases/:name", handle: getLease },
];
