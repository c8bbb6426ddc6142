/**
 * The status the node reports for a pod, merged with what the API server holds as the kubelet's
 * mergePodStatus does (pkg/kubelet/status/status_manager.go): the conditions the kubelet owns come
 * from the node, the others (set by controllers, the scheduler's and the disruption controller's)
 * stay as the API server has them, and the resource claim statuses, which the kubelet never
 * writes, are kept. A terminal phase never carries a ready pod.
 */
import { isoTime } from "../v1/time.ts";
import type { V1PodStatus } from "../v1/v1.ts";

/** PodConditionsByKubelet (pkg/kubelet/types/pod_status.go), with PodReadyToStartContainers (GA). */
const KUBELET_CONDITIONS = new Set(["PodScheduled", "Ready", "Initialized", "ContainersReady", "PodResizeInProgress", "PodResizePending", "PodReadyToStartContainers"]);

/** The API server's status fields the kubelet never writes: kept as the server has them. */
const NOT_OWNED = ["resourceClaimStatuses", "extendedResourceClaimStatus", "nodeAllocatableResourceClaimStatuses", "nominatedNodeName"] as const;

type Condition = { type: string; status?: string; [field: string]: unknown };

/** `now` dates a PodScheduled condition the API server does not have yet. */
export function mergePodStatus(server: V1PodStatus | undefined, node: V1PodStatus, now: number): V1PodStatus {
  const serverConditions = ((server?.conditions ?? []) as Condition[]);
  const nodeConditions = ((node.conditions ?? []) as Condition[]);
  const conditions: Condition[] = serverConditions.filter((condition) => !KUBELET_CONDITIONS.has(condition.type));
  conditions.push(...nodeConditions.filter((condition) => KUBELET_CONDITIONS.has(condition.type)));
  // The kubelet appends PodScheduled True itself (generateAPIPodStatus), its transition time kept
  // from the API server's (the scheduler's binding set it; a pod bound by spec.nodeName has none).
  if (!nodeConditions.some((condition) => condition.type === "PodScheduled")) {
    const scheduled = serverConditions.find((condition) => condition.type === "PodScheduled");
    conditions.push(scheduled?.status === "True" ? scheduled : { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: scheduled?.lastTransitionTime ?? isoTime(now) });
  }
  const merged: Record<string, unknown> = { ...node };
  merged.conditions = conditions;
  for (const field of NOT_OWNED) {
    const value = (server as Record<string, unknown> | undefined)?.[field];
    if (value === undefined) delete merged[field];
    else merged[field] = value;
  }
  return merged as V1PodStatus;
}
