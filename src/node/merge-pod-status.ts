/**
 * The status the node reports for a pod, merged with what the API server holds as the kubelet's
 * mergePodStatus does (pkg/kubelet/status/status_manager.go): the conditions the kubelet owns come
 * from the node, the others (set by controllers, the scheduler's and the disruption controller's)
 * stay as the API server has them, and the resource claim statuses, which the kubelet never
 * writes, are kept. A terminal phase never carries a ready pod. A pod with readiness gates is Ready
 * only once each gate's condition (written by others) is True, as GeneratePodReadyCondition decides
 * (pkg/kubelet/status/generate.go), so a gate set True later is a new merge, and a new patch.
 */
import { isoTime } from "../v1/time.ts";
import type { V1PodStatus } from "../v1/v1.ts";

/** PodConditionsByKubelet (pkg/kubelet/types/pod_status.go), with PodReadyToStartContainers (GA). */
const KUBELET_CONDITIONS = new Set(["PodScheduled", "Ready", "Initialized", "ContainersReady", "PodResizeInProgress", "PodResizePending", "PodReadyToStartContainers"]);

/** The API server's status fields the kubelet never writes: kept as the server has them. */
const NOT_OWNED = ["resourceClaimStatuses", "extendedResourceClaimStatus", "nodeAllocatableResourceClaimStatuses", "nominatedNodeName"] as const;

type Condition = { type: string; status?: string; [field: string]: unknown };

/** `now` dates a PodScheduled condition the API server does not have yet, and a Ready the gates changed. */
export function mergePodStatus(server: V1PodStatus | undefined, node: V1PodStatus, now: number, readinessGates: readonly string[] = []): V1PodStatus {
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
  if (readinessGates.length > 0) gateReady(conditions, serverConditions, readinessGates, now);
  const merged: Record<string, unknown> = { ...node };
  merged.conditions = conditions;
  for (const field of NOT_OWNED) {
    const value = (server as Record<string, unknown> | undefined)?.[field];
    if (value === undefined) delete merged[field];
    else merged[field] = value;
  }
  return merged as V1PodStatus;
}

/**
 * Ready as the gates leave it: the node's Ready stands unless it is True and a gate's condition is
 * missing or not True (then False, ReadinessGatesNotReady, a message per gate); its transition time
 * is the API server's while the status stays, now when it changes (the status manager's rule).
 */
function gateReady(conditions: Condition[], serverConditions: Condition[], gates: readonly string[], now: number): void {
  const index = conditions.findIndex((condition) => condition.type === "Ready");
  const ready = conditions[index];
  if (!ready || ready.status !== "True") return;
  const unready: string[] = [];
  for (const gate of gates) {
    const condition = conditions.find((candidate) => candidate.type === gate);
    if (!condition) unready.push(`corresponding condition of pod readiness gate ${JSON.stringify(gate)} does not exist.`);
    else if (condition.status !== "True") unready.push(`the status of pod readiness gate ${JSON.stringify(gate)} is not "True", but ${condition.status}`);
  }
  const status = unready.length > 0 ? "False" : "True";
  const held = serverConditions.find((condition) => condition.type === "Ready");
  const lastTransitionTime = held?.status === status && held.lastTransitionTime ? held.lastTransitionTime : isoTime(now);
  const { reason: _reason, message: _message, ...rest } = ready;
  conditions[index] = unready.length > 0 ? { ...rest, status, reason: "ReadinessGatesNotReady", message: unready.join(", "), lastTransitionTime } : { ...rest, status, lastTransitionTime };
}
