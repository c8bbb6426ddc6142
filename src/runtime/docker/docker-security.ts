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
import { effectiveSecurity } from "../../manifest/security-context.ts";
import type { PodSpec } from "../../manifest/types.ts";

type SecurityOptions = Pick<ContainerCreateOptions, "User"> & { HostConfig: NonNullable<ContainerCreateOptions["HostConfig"]> };

/** The create options' part for the container named `name` of `pod`, as its manifest sets them. */
export function securityCreateOptions(pod: PodSpec, name: string): SecurityOptions {
  const security = effectiveSecurity(pod, name);
  const { runAsUser: user, runAsGroup: group, groups } = security;
  const hostConfig: SecurityOptions["HostConfig"] = {};
  if (groups.length > 0) hostConfig.GroupAdd = groups.map(String);
  if (security.privileged) hostConfig.Privileged = true;
  if (security.noNewPrivs) hostConfig.SecurityOpt = ["no-new-privileges"];
  if (security.readOnlyRootFilesystem) hostConfig.ReadonlyRootfs = true;
  if (security.capabilitiesAdd.length) hostConfig.CapAdd = security.capabilitiesAdd;
  if (security.capabilitiesDrop.length) hostConfig.CapDrop = security.capabilitiesDrop;
  // A group without a user keeps the image's user, which the engine cannot be told apart from it.
  return { ...(user !== undefined && { User: group !== undefined ? `${user}:${group}` : String(user) }), HostConfig: hostConfig };
}
