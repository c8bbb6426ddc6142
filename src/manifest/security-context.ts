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

/** The fields of a securityContext a runtime applies to a container's process. */
interface ProcessSecurityFields {
  runAsUser?: number;
  runAsGroup?: number;
  supplementalGroups?: number[];
  fsGroup?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}

/** Who a container's process runs as and what it may do, merged as the kubelet merges them for the CRI. */
export interface EffectiveSecurity {
  runAsUser?: number;
  runAsGroup?: number;
  /** The pod's supplementalGroups, then its fsGroup: extra groups of every container. */
  groups: number[];
  privileged: boolean;
  /** allowPrivilegeEscalation false: the process gets no_new_privs. */
  noNewPrivs: boolean;
  readOnlyRootFilesystem: boolean;
  capabilitiesAdd: string[];
  capabilitiesDrop: string[];
}

/**
 * Container `name`'s effective security (kuberuntime/security_context.go
 * determineEffectiveSecurityContext): the container's runAsUser and runAsGroup over the pod's, the
 * pod's supplementalGroups and fsGroup as extra groups, and the container's own privileged,
 * allowPrivilegeEscalation, readOnlyRootFilesystem and capabilities.
 */
export function effectiveSecurity(pod: PodSpec, name: string): EffectiveSecurity {
  const { pod: podContext, container: own } = securityContexts<ProcessSecurityFields>(pod, name);
  const runAsUser = own.runAsUser ?? podContext.runAsUser;
  const runAsGroup = own.runAsGroup ?? podContext.runAsGroup;
  return {
    ...(runAsUser !== undefined && { runAsUser }),
    ...(runAsGroup !== undefined && { runAsGroup }),
    groups: [...(podContext.supplementalGroups ?? []), ...(podContext.fsGroup !== undefined ? [podContext.fsGroup] : [])],
    privileged: own.privileged === true,
    noNewPrivs: own.allowPrivilegeEscalation === false,
    readOnlyRootFilesystem: own.readOnlyRootFilesystem === true,
    capabilitiesAdd: own.capabilities?.add ?? [],
    capabilitiesDrop: own.capabilities?.drop ?? [],
  };
}
