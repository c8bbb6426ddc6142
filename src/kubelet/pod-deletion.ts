/**
 * Asking a pod to go: a removed or replaced manifest, an agent shutting down, a delete through the
 * API. The request is recorded on the pod; its passes then stop it (pod-actions.ts syncTerminating).
 */
import type { KubeEvent } from "../v1/kube-event.ts";
import type { EventType } from "../v1/kube-event.ts";
import { allContainers, type ContainerRecord, type PodRecord } from "./pod-state.ts";
import type { SyncContext } from "./sync-context.ts";
import { shortenStop } from "./lifecycle/termination.ts";

export type DeletionCause = NonNullable<PodRecord["deletionCause"]>;

/**
 * Whether the pod was asked to go (deleted, its manifest removed or replaced, the agent shutting
 * down) since its pass began: the request lands on the record between two steps of that pass.
 */
export function terminationRequested(pod: PodRecord): boolean {
  return pod.deletionRequestedAt !== undefined;
}

/** Marks the pod going away at `at`; a second request only makes a stop a shutdown's. */
export function requestDeletion(pod: PodRecord, cause: DeletionCause, at: number): void {
  if (pod.deletionRequestedAt !== undefined) {
    if (cause === "shutdown") pod.deletionCause = cause;
    return;
  }
  pod.deletionRequestedAt = at;
  pod.deletionCause = cause;
}

/**
 * A delete through the API: the pod goes the way a removed file's pod goes, with the API's grace,
 * from the time the API accepted it (which its answer reported). A second delete may shorten the
 * grace of a pod already stopping (`--force --grace-period=0`).
 */
export function deleteApiPod(ctx: SyncContext, pod: PodRecord, deletion: { requestedAt: number; gracePeriodSeconds: number }): void {
  const graceSeconds = deletion.gracePeriodSeconds;
  if (pod.deletionRequestedAt === undefined) {
    pod.replacement = undefined;
    pod.deletionGraceSeconds = graceSeconds;
    requestDeletion(pod, "removed", deletion.requestedAt);
    return;
  }
  if (pod.deletionCause === "shutdown") return;
  // Deleted while being replaced by a newer spec: the replacement must not start afterwards.
  pod.replacement = undefined;
  pod.deletionCause = "removed";
  if (graceSeconds >= (pod.deletionGraceSeconds ?? pod.spec.terminationGracePeriodSeconds)) return;
  pod.deletionGraceSeconds = graceSeconds;
  for (const container of allContainers(pod)) shortenStop(ctx, pod, container, graceSeconds * 1000);
}

/** An event about the pod (or one of its containers), as the loop records it. */
export function podEvent(pod: PodRecord, at: number, type: EventType, reason: string, container: ContainerRecord | undefined, message: string): KubeEvent {
  return { at, type, reason, podKey: pod.spec.key, namespace: pod.spec.namespace, pod: pod.spec.fullName, podUid: pod.spec.uid, container: container?.name ?? "", message };
}
