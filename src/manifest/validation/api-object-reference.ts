/**
 * Which API objects a volume would make a static pod reference, in the kubelet's words: since 1.37
 * the kubelet refuses a static pod that references Secrets, ConfigMaps, service accounts and the
 * like (pkg/kubelet/config/common.go: "static pods may not reference %s", with the resource named
 * as pkg/api/pod's HasAPIObjectReference names it), since nothing may resolve them for a pod the
 * API server never admitted.
 */

/** The referenced resource of a volume `source` (its field name) holding `value`, or undefined. */
export function volumeObjectReference(source: string, value: unknown): string | undefined {
  switch (source) {
    case "configMap":
      return "configmaps (via configmap volumes)";
    case "secret":
      return "secrets (via secret volumes)";
    case "csi":
      return "csidrivers (via CSI volumes)";
    case "glusterfs":
      return "endpoints (via glusterFS volumes)";
    case "persistentVolumeClaim":
      return "persistentvolumeclaims";
    case "ephemeral":
      return "persistentvolumeclaims (via ephemeral volumes)";
    case "azureFile":
      return "secrets (via azureFile volumes)";
    case "projected":
      return projectedReference(value);
  }
  return undefined;
}

function projectedReference(value: unknown): string | undefined {
  const sources = (value as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(sources)) return undefined;
  for (const item of sources as Record<string, unknown>[]) {
    if (item?.configMap) return "configmaps (via projected volumes)";
    if (item?.secret) return "secrets (via projected volumes)";
    if (item?.serviceAccountToken) return "serviceaccounts (via projected volumes)";
    if (item?.clusterTrustBundle) return "clustertrustbundles";
    if (item?.podCertificate) return "podcertificates";
  }
  return undefined;
}

/** What a static pod's refusal of a ConfigMap or Secret adds: how such a pod runs here. */
export const CREATE_THROUGH_THE_API = "create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets";

/** The kubelet's refusal of a volume's reference, with how to run the pod here when the agent can. */
export function staticReferenceRefusal(reference: string): string {
  const refusal = `static pods may not reference ${reference}`;
  return reference.startsWith("configmaps") || reference.startsWith("secrets") ? `${refusal}: ${CREATE_THROUGH_THE_API}` : refusal;
}
