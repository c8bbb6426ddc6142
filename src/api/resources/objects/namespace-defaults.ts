/**
 * What the controller-manager puts in every namespace, which pods rely on: the ServiceAccounts
 * controller's `default` ServiceAccount (a pod that names none runs as it) and the root CA
 * publisher's `kube-root-ca.crt` ConfigMap (the CA a client in a pod trusts the API with). They are
 * made when the namespace is (the system namespaces at the agent's start, a created one at its
 * create, one an API pod is created in at that create) and go with the namespace's delete; one a
 * user deleted is back at the next of these.
 */
import { randomUUID } from "node:crypto";
import type { ObjectResource, SqliteObjectStore } from "../../../store/object-store.ts";
import { isoTime } from "../../../v1/time.ts";
import { creationTime } from "../object-meta.ts";

export const DEFAULT_SERVICE_ACCOUNT = "default";
export const ROOT_CA_CONFIG_MAP = "kube-root-ca.crt";
/** The publisher's annotation, as the controller-manager writes it. */
const ROOT_CA_DESCRIPTION =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/**
 * Stores `namespace`'s default ServiceAccount and, given the API's CA, its kube-root-ca.crt,
 * each unless there is one.
 */
export function ensureNamespaceDefaults(objects: SqliteObjectStore, namespace: string, now: number, rootCa?: string): void {
  const createdAt = isoTime(creationTime(now));
  const ensure = (resource: ObjectResource, name: string, fields: Record<string, unknown>, annotations?: Record<string, string>) => {
    const uid = randomUUID();
    const metadata = { name, namespace, uid, creationTimestamp: createdAt, ...(annotations && { annotations }) };
    objects.createIfAbsent({ resource, namespace, name }, uid, { metadata, ...fields });
  };
  ensure("serviceaccounts", DEFAULT_SERVICE_ACCOUNT, {});
  if (rootCa !== undefined) ensure("configmaps", ROOT_CA_CONFIG_MAP, { data: { "ca.crt": rootCa } }, { "kubernetes.io/description": ROOT_CA_DESCRIPTION });
}
