/**
 * The Node's status as node mode reports it, from the one drawing (node-object.ts) and the Node the
 * API server holds, by the kubelet's rules (pkg/kubelet/nodestatus/setters.go, updateNode and
 * nodeStatusHasChanged in kubelet_node_status.go): every condition's heartbeat is now, its
 * transition time stays while its status does; what the drawing does not own (conditions of other
 * writers, extended resources, images) is kept as the API server has it. Pure, so the rules are
 * tested with any Node.
 */
import { parseQuantity } from "../manifest/quantity.ts";
import { isoTime } from "../v1/time.ts";
import { jsonEqual, twoWayMergePatch, type MergeKeys } from "./two-way-patch.ts";

export interface NodeCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The part of a v1 Node this agent reads and writes. */
export interface ClusterNode {
  metadata: { name: string; uid?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
  spec?: Record<string, unknown>;
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: NodeCondition[];
    addresses?: { type: string; address: string }[];
    daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
    nodeInfo?: Record<string, string>;
    [key: string]: unknown;
  };
}

/** What the drawing says of the node's status. */
export type DrawnStatus = Required<Pick<NonNullable<ClusterNode["status"]>, "capacity" | "allocatable" | "conditions" | "addresses" | "daemonEndpoints" | "nodeInfo">>;

/** v1.NodeStatus's lists merged on a key (`patchMergeKey: type`); every other list is replaced. */
export const NODE_MERGE_KEYS: MergeKeys = { "status.conditions": "type", "status.addresses": "type" };

/**
 * `base` (the Node as the API server last answered) with the drawn status laid over it at `now`.
 * A quantity equal in value to the one held keeps the held spelling: the API server stores
 * quantities in canonical form (95000000000 comes back as 95G), which is no change.
 */
export function withDrawnStatus(base: ClusterNode, drawn: DrawnStatus, now: number): ClusterNode {
  const node = structuredClone(base);
  const status = (node.status ??= {});
  status.capacity = overlayQuantities(status.capacity, drawn.capacity);
  status.allocatable = overlayQuantities(status.allocatable, drawn.allocatable);
  status.conditions = carryConditions(status.conditions ?? [], drawn.conditions, now);
  status.addresses = drawn.addresses;
  status.daemonEndpoints = drawn.daemonEndpoints;
  status.nodeInfo = { ...status.nodeInfo, ...drawn.nodeInfo };
  return node;
}

/**
 * The conditions as the setters leave them: each drawn one beats now; one whose status stays keeps
 * its transition time (a new one, or one whose status changed, transitions now). Conditions the
 * drawing has no word on stay as they are.
 */
export function carryConditions(held: NodeCondition[], drawn: NodeCondition[], now: number): NodeCondition[] {
  const at = isoTime(now);
  const next = held.map((condition) => ({ ...condition }));
  for (const condition of drawn) {
    const index = next.findIndex((candidate) => candidate.type === condition.type);
    const previous = index >= 0 ? next[index] : undefined;
    const lastTransitionTime = previous?.status === condition.status && previous.lastTransitionTime ? previous.lastTransitionTime : at;
    const updated: NodeCondition = { type: condition.type, status: condition.status, lastHeartbeatTime: at, lastTransitionTime, reason: condition.reason, message: condition.message };
    if (index >= 0) next[index] = updated;
    else next.push(updated);
  }
  return next;
}

/** The events the kubelet's setters record for each pressure condition's state, as (status True, status False). */
const PRESSURE_EVENTS: Record<string, [string, string]> = {
  MemoryPressure: ["NodeHasInsufficientMemory", "NodeHasSufficientMemory"],
  DiskPressure: ["NodeHasDiskPressure", "NodeHasNoDiskPressure"],
  PIDPressure: ["NodeHasInsufficientPID", "NodeHasSufficientPID"],
};

/**
 * The events the kubelet's setters record going from the `held` conditions to `next`
 * (nodestatus/setters.go): a pressure condition whose status is new (a missing one counts as
 * Unknown) or changed, and Ready only when it existed and changed (NodeReady, NodeNotReady); in the
 * setters' order. Each is told as "Node NAME status is now: REASON" (recordNodeStatusEvent).
 */
export function conditionEvents(held: NodeCondition[] | undefined, next: NodeCondition[]): string[] {
  const statusIn = (conditions: NodeCondition[] | undefined, type: string) => conditions?.find((condition) => condition.type === type)?.status;
  const reasons: string[] = [];
  for (const [type, [pressure, noPressure]] of Object.entries(PRESSURE_EVENTS)) {
    const status = statusIn(next, type);
    if (status === undefined || status === "Unknown" || status === (statusIn(held, type) ?? "Unknown")) continue;
    reasons.push(status === "True" ? pressure : noPressure);
  }
  const ready = statusIn(next, "Ready");
  const wasReady = statusIn(held, "Ready");
  if (ready !== undefined && wasReady !== undefined && ready !== wasReady) reasons.push(ready === "True" ? "NodeReady" : "NodeNotReady");
  return reasons;
}

/** nodeStatusHasChanged: any difference but the conditions' heartbeats (the conditions compared by type). */
export function nodeStatusHasChanged(original: ClusterNode["status"], status: ClusterNode["status"]): boolean {
  const withoutHeartbeats = (conditions: NodeCondition[] = []) =>
    [...conditions].sort((a, b) => a.type.localeCompare(b.type)).map(({ lastHeartbeatTime: _, ...rest }) => rest);
  if (!jsonEqual(withoutHeartbeats(original?.conditions), withoutHeartbeats(status?.conditions))) return true;
  const { conditions: _a, ...originalRest } = original ?? {};
  const { conditions: _b, ...statusRest } = status ?? {};
  return !jsonEqual(originalRest, statusRest);
}

/**
 * The strategic merge patch of nodes/NAME/status from `original` to `modified`, as PatchNodeStatus
 * builds it: labels, annotations and status (never spec). v1.NodeStatus's addresses are wrongly
 * marked merge-by-type (two InternalIPs would collapse), so changed addresses are sent whole with
 * a `$patch: replace` element, as fixupPatchForNodeStatusAddresses does.
 */
export function nodeStatusPatch(original: ClusterNode, modified: ClusterNode): Record<string, any> {
  const held = original.status?.addresses ?? [];
  const replaceAddresses = held.length > 0 && !jsonEqual(held, modified.status?.addresses ?? []);
  const comparable = (node: ClusterNode, addresses: unknown) => ({
    metadata: { labels: node.metadata.labels ?? {}, annotations: node.metadata.annotations ?? {} },
    status: { ...node.status, ...(addresses !== undefined && { addresses }) },
  });
  const patch: Record<string, any> = twoWayMergePatch(comparable(original, undefined) as never, comparable(modified, replaceAddresses ? held : undefined) as never, NODE_MERGE_KEYS);
  if (replaceAddresses) patch.status = { ...patch.status, addresses: [...modified.status!.addresses!, { $patch: "replace" }] };
  return patch;
}

function overlayQuantities(held: Record<string, string> | undefined, drawn: Record<string, string>): Record<string, string> {
  const next = { ...held };
  for (const [name, value] of Object.entries(drawn)) next[name] = held?.[name] !== undefined && sameQuantity(held[name]!, value) ? held[name]! : value;
  return next;
}

function sameQuantity(a: string, b: string): boolean {
  try {
    return parseQuantity(a).cmp(parseQuantity(b)) === 0;
  } catch {
    return a === b;
  }
}
