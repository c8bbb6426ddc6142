/**
 * A container's security contexts as its manifest writes them: the pod's and the container's own
 * (found by name among the init, app and ephemeral containers), which the kubelet's
 * DetermineEffectiveSecurityContext merges field by field, the container's first.
 */
import type { PodSpec } from "./types.ts";

export function securityContexts<T extends object>(pod: PodSpec, name: string): { pod: Partial<T>; container: Partial<T> } {
  const spec = (pod.manifest.spec ?? {}) as Record<string, unknown>;
  const podContext = (spec.securityContext ?? {}) as Partial<T>;
  for (const list of ["initContainers", "containers", "ephemeralContainers"]) {
    const containers = Array.isArray(spec[list]) ? (spec[list] as { name?: unknown; securityContext?: Partial<T> }[]) : [];
    const found = containers.find((container) => container?.name === name);
    if (found) return { pod: podContext, container: found.securityContext ?? {} };
  }
  return { pod: podContext, container: {} };
}
