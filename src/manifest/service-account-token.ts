/**
 * Where the API server's ServiceAccount admission mounts a pod's token (its kube-api-access-<5 random characters>
 * projected volume): the admission writes these, and the runtimes' rules know the mount it added.
 */
export const TOKEN_VOLUME_PREFIX = "kube-api-access-";
export const TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The admission's own mount, which the pod's author did not write. */
export function isAdmittedTokenMount(mount: { name?: unknown; mountPath?: unknown }): boolean {
  return mount.mountPath === TOKEN_MOUNT_PATH && typeof mount.name === "string" && mount.name.startsWith(TOKEN_VOLUME_PREFIX);
}
