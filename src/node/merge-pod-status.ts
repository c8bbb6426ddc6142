/**
 * The status the node reports for a pod, merged with what the API server holds as the kubelet's
 * mergePodStatus does (pkg/kubelet/status/status_manager.go): the conditions the kubelet owns come
 * from the node, the others (set by controllers, the scheduler's and the disruption controller's)
 * stay as the API server has them, and the resource claim statuses, which the kubelet never
 * writes, are kept. A terminal phase never carries a ready pod.
 */
import type { V1PodStatus } from "../v1/v1.ts";

/** PodConditionsByKubelet (pkg/kubelet/types/pod_status.go), with PodReadyToStartContainers (GA). */
const KUBELET_CONDITIONS = new Set(["PodScheduled", "Ready", "Initialized", "ContainersReady", "PodResizeInProgress", "PodResizePending", "PodReadyToStartContainers"]);

/** The API server's status fields the kubelet never writes: kept as the server has them. */
const NOT_OWNED = ["resourceClaimStatuses", "extendedResourceClaimStatus", "nodeAllocatableResourceClaimStatuses", "nominatedNodeName"] as const;

type Condition = { type: string; status?: string; [field: string]: unknown };

export function mergePodStatus(server: V1PodStatus | undefined, node: V1PodStatus): V1PodStatus {
  const serverConditions = ((server?.conditions ?? []) as Condition[]);
  const nodeConditions = ((node.conditions ?? []) as Condition[]);
  const conditions: Condition[] = serverConditions.filter((condition) => !KUBELET_CONDITIONS.has(condition.type));
  // The kubelet reports PodScheduled True itself; ours draws the four of a standalone pod, so the
  // scheduler's (or the API server's) PodScheduled stays rather than being deleted.
  const scheduled = serverConditions.find((condition) => condition.type === "PodScheduled");
  if (scheduled && !nodeConditions.some((condition) => condition.type === "PodScheduled")) conditions.push(scheduled);
  conditions.push(...nodeConditions.filter((condition) => KUBELET_CONDITIONS.has(condition.type)));
  const merged: Record<string, unknown> = { ...node };
  if (conditions.length > 0) merged.conditions = conditions;
  else delete merged.conditions;
  for (const field of NOT_OWNED) {
    const value = (server as Record<string, unknown> | undefined)?.[field];
    if (value === undefined) delete merged[field];
    else merged[field] = value;
  }
  return merged as V1PodStatus;
}
