/**
 * A container's security context as the engine takes it, built as the kubelet builds the CRI's
 * (kuberuntime/security_context.go determineEffectiveSecurityContext, and
 * kuberuntime_container_linux.go): the container's runAsUser and runAsGroup over the pod's, the
 * pod's supplementalGroups with its fsGroup as extra groups, privileged, no_new_privs when
 * allowPrivilegeEscalation is false, a read-only root filesystem, and the capabilities to add and
 * drop. runAsNonRoot is the loop's check before the start (kubelet/run-as-non-root.ts). What the
 * engine is not told (SELinux, seccomp and AppArmor profiles, sysctls, fsGroup's volume ownership)
 * is a validate warning (manifest/runtime-rules.ts).
 */
import type { ContainerCreateOptions } from "dockerode";
import { securityContexts } from "../../manifest/security-context.ts";
import type { PodSpec } from "../../manifest/types.ts";

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  supplementalGroups?: number[];
  fsGroup?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}

type SecurityOptions = Pick<ContainerCreateOptions, "User"> & { HostConfig: NonNullable<ContainerCreateOptions["HostConfig"]> };

/** The create options' part for the container named `name` of `pod`, as its manifest sets them. */
export function securityCreateOptions(pod: PodSpec, name: string): SecurityOptions {
  const { pod: podContext, container: own } = securityContexts<SecurityContext>(pod, name);
  const user = own.runAsUser ?? podContext.runAsUser;
  const group = own.runAsGroup ?? podContext.runAsGroup;
  const groups = [...(podContext.supplementalGroups ?? []), ...(podContext.fsGroup !== undefined ? [podContext.fsGroup] : [])];
  const hostConfig: SecurityOptions["HostConfig"] = {};
  if (groups.length > 0) hostConfig.GroupAdd = groups.map(String);
  if (own.privileged === true) hostConfig.Privileged = true;
  if (own.allowPrivilegeEscalation === false) hostConfig.SecurityOpt = ["no-new-privileges"];
  if (own.readOnlyRootFilesystem === true) hostConfig.ReadonlyRootfs = true;
  if (own.capabilities?.add?.length) hostConfig.CapAdd = own.capabilities.add;
  if (own.capabilities?.drop?.length) hostConfig.CapDrop = own.capabilities.drop;
  // A group without a user keeps the image's user, which the engine cannot be told apart from it.
  return { ...(user !== undefined && { User: group !== undefined ? `${user}:${group}` : String(user) }), HostConfig: hostConfig };
}
