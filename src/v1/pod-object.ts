/**
 * The one drawing of a served v1 Pod: metadata from the admitted pod (the static-pod annotations
 * included), the spec exactly as it was stored (the API server's defaults were applied once, when
 * it entered), the node, and a status given by whoever owns it: the loop's status module for a pod
 * it runs (kubelet/status/pod-status.ts), `unsyncedStatus` for a pod the loop has not synced yet.
 */
import type { PodSpec } from "../manifest/types.ts";
import { podQosClass } from "../manifest/qos.ts";
import { nodeNameOf } from "../host/node-name.ts";
import { isoTime } from "./time.ts";
import type { V1Pod, V1PodSpec, V1PodStatus } from "./v1.ts";

/** The annotation by which the API server and a kubelet know a static pod's mirror (its value the pod's config hash). */
export const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

/** What the served object says beyond the spec: when the pod was created and whether it is being deleted. */
export interface PodObjectMeta {
  createdAt: number;
  /** Set once a deletion was asked for: the object carries deletionTimestamp and its grace. */
  deletion?: { requestedAt: number; graceSeconds: number };
}

export function podObject(spec: PodSpec, meta: PodObjectMeta, status: V1PodStatus): V1Pod {
  const written = (spec.manifest.metadata ?? {}) as Record<string, unknown>;
  const metadata: V1Pod["metadata"] = {
    name: spec.fullName,
    ...(typeof written.generateName === "string" && written.generateName !== "" && { generateName: written.generateName }),
    namespace: spec.namespace,
    uid: spec.uid,
    creationTimestamp: isoTime(meta.createdAt),
  };
  if (meta.deletion) {
    metadata.deletionTimestamp = isoTime(meta.deletion.requestedAt);
    metadata.deletionGracePeriodSeconds = meta.deletion.graceSeconds;
  }
  metadata.labels = { ...spec.labels };
  metadata.annotations = servedAnnotations(spec, meta.createdAt);
  const stored = (spec.manifest.spec ?? {}) as unknown as V1PodSpec;
  return { apiVersion: "v1", kind: "Pod", metadata, spec: { ...stored, nodeName: nodeNameOf(spec.node) }, status };
}

/** The pod's annotations as served, and as the downward API gives them: the written ones and the static-pod ones. */
export function servedAnnotations(spec: PodSpec, createdAt: number): Record<string, string> {
  return {
    ...spec.annotations,
    // As on a mirror pod; a pod created through the API carries no hash in the API, its spec is its own.
    ...(!spec.api && { "kubernetes.io/config.hash": spec.configHash }),
    "kubernetes.io/config.seen": isoTime(createdAt),
    "kubernetes.io/config.source": spec.api ? "api" : "file",
  };
}

/**
 * The status of a pod no kubelet has reported on yet, as the API server sets it on create
 * (the pod strategy's PrepareForCreate): Pending, with its QoS class.
 */
export function unsyncedStatus(spec: PodSpec): V1PodStatus {
  return { phase: "Pending", qosClass: podQosClass([...spec.initContainers, ...spec.containers], spec.resources) };
}
