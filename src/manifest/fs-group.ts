/** A pod's securityContext.fsGroup, which owns its volumes (kubelet/volumes, the docker runtime's emptyDirs). */
import type { PodSpec } from "./types.ts";

export function podFsGroup(pod: PodSpec): number | undefined {
  const fsGroup = ((pod.manifest.spec ?? {}) as { securityContext?: { fsGroup?: unknown } }).securityContext?.fsGroup;
  return typeof fsGroup === "number" ? fsGroup : undefined;
}
