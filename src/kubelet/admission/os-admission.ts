/**
 * The OS checks of the kubelet's predicate admit handler (pkg/kubelet/lifecycle/predicate.go),
 * made before the resources (no preemption could help them): a pod whose `kubernetes.io/os` label or `spec.os.name` names another OS
 * than the node's is refused (rejectPodAdmissionBasedOnOSSelector, rejectPodAdmissionBasedOnOSField).
 */
import type { PodSpec } from "../../manifest/types.ts";
import type { AdmissionRefusal } from "./admission.ts";

/** runtime.GOOS of this node, as the kubelet compares it. */
const NODE_OS = process.platform;

export function osRefusal(spec: PodSpec): AdmissionRefusal | undefined {
  const selected = spec.labels["kubernetes.io/os"];
  if (selected !== undefined && selected !== NODE_OS) {
    return { reason: "PodOSSelectorNodeLabelDoesNotMatch", message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" };
  }
  const os = (spec.manifest.spec as { os?: { name?: unknown } } | undefined)?.os?.name;
  if (typeof os === "string" && os !== NODE_OS) return { reason: "PodOSNotSupported", message: "Failed to admit pod as the OS field doesn't match node OS" };
  return undefined;
}
