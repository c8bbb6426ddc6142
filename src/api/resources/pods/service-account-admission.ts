/**
 * The API server's ServiceAccount admission on a pod's create (plugin/pkg/admission/serviceaccount):
 * a pod that names no ServiceAccount runs as `default`; the one it names must exist (403 otherwise,
 * in the plugin's words); unless the pod or its ServiceAccount turns automount off, every init and
 * app container without a mount at the token path gets the `kube-api-access-<5 random characters>` projected volume
 * there (a bound token, the namespace's kube-root-ca.crt and the namespace); and a pod without
 * imagePullSecrets takes its ServiceAccount's. Ephemeral containers are left as they are, as there.
 */
import { isPlainObject } from "../../../manifest/fields.ts";
import { TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX } from "../../../manifest/service-account-token.ts";
import type { StoredObject } from "../../../store/object-store.ts";
import { MIRROR_ANNOTATION } from "../../../v1/pod-object.ts";
import { ApiError } from "../../http/status.ts";
import { generatedName } from "../object-meta.ts";
import { DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIG_MAP } from "../objects/namespace-defaults.ts";

/** The plugin's token lifetime: an hour and 7 s, the value the API server extends (and warns on) when it issues. */
const TOKEN_EXPIRATION_SECONDS = 3607;
/** The projected volume's defaultMode, set explicitly by the plugin (kubernetes#104464). */
const PROJECTED_DEFAULT_MODE = 0o644;

/**
 * Applies the admission to a submitted pod object in place. `serviceAccount` reads the named
 * ServiceAccount of the pod's namespace; a missing `default` counts as one with no settings, as the
 * namespace's is made at this very create (the plugin waits for the controller that makes it).
 */
export function admitServiceAccount(pod: Record<string, unknown>, namespace: string, name: string, serviceAccount: (name: string) => StoredObject | undefined): void {
  const spec = isPlainObject(pod.spec) ? pod.spec : undefined;
  if (!spec) return;
  // A mirror pod is left as its kubelet wrote it (another spec would have it deleted as changed), and names no ServiceAccount.
  const annotations = isPlainObject(pod.metadata) && isPlainObject(pod.metadata.annotations) ? pod.metadata.annotations : {};
  if (MIRROR_ANNOTATION in annotations) {
    if (typeof spec.serviceAccountName === "string" && spec.serviceAccountName !== "") throw ApiError.forbidden("pods", name, "a mirror pod may not reference service accounts");
    return;
  }
  if (typeof spec.serviceAccountName !== "string" || spec.serviceAccountName === "") {
    spec.serviceAccountName = typeof spec.serviceAccount === "string" && spec.serviceAccount !== "" ? spec.serviceAccount : DEFAULT_SERVICE_ACCOUNT;
  }
  // The API's defaulting keeps the deprecated alias in step, so the stored pod reads the same either way.
  spec.serviceAccount = spec.serviceAccountName;
  const accountName = spec.serviceAccountName as string;
  const stored = serviceAccount(accountName);
  if (!stored && accountName !== DEFAULT_SERVICE_ACCOUNT) {
    throw ApiError.forbidden("pods", name, `error looking up service account ${namespace}/${accountName}: serviceaccount "${accountName}" not found`);
  }
  const account = stored?.object ?? {};
  if (automounts(spec, account)) mountToken(spec);
  const pullSecrets = Array.isArray(spec.imagePullSecrets) ? spec.imagePullSecrets : [];
  const accountPullSecrets = Array.isArray(account.imagePullSecrets) ? account.imagePullSecrets.filter(isPlainObject) : [];
  if (pullSecrets.length === 0 && accountPullSecrets.length > 0) {
    spec.imagePullSecrets = accountPullSecrets.map((secret) => ({ name: typeof secret.name === "string" ? secret.name : "" }));
  }
}

/** The pod's choice wins, then its ServiceAccount's; a token is mounted by default. */
function automounts(spec: Record<string, unknown>, account: Record<string, unknown>): boolean {
  if (typeof spec.automountServiceAccountToken === "boolean") return spec.automountServiceAccountToken;
  if (typeof account.automountServiceAccountToken === "boolean") return account.automountServiceAccountToken;
  return true;
}

function mountToken(spec: Record<string, unknown>): void {
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  const existing = volumes.find((volume) => isPlainObject(volume) && typeof volume.name === "string" && volume.name.startsWith(TOKEN_VOLUME_PREFIX)) as
    | Record<string, unknown>
    | undefined;
  const volumeName = existing ? (existing.name as string) : generatedName(TOKEN_VOLUME_PREFIX);
  let needed = false;
  for (const list of [spec.initContainers, spec.containers]) {
    if (!Array.isArray(list)) continue;
    for (const container of list) {
      if (!isPlainObject(container)) continue;
      const mounts = Array.isArray(container.volumeMounts) ? container.volumeMounts : [];
      if (mounts.some((mount) => isPlainObject(mount) && mount.mountPath === TOKEN_MOUNT_PATH)) continue;
      container.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needed = true;
    }
  }
  if (!existing && needed) spec.volumes = [...volumes, { name: volumeName, projected: tokenVolumeSource() }];
}

function tokenVolumeSource(): Record<string, unknown> {
  return {
    defaultMode: PROJECTED_DEFAULT_MODE,
    sources: [
      { serviceAccountToken: { path: "token", expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
      { configMap: { name: ROOT_CA_CONFIG_MAP, items: [{ key: "ca.crt", path: "ca.crt" }] } },
      { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
    ],
  };
}
