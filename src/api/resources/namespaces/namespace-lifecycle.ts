/**
 * The API server's NamespaceLifecycle admission, for the writes served here: nothing is created in
 * a namespace that does not exist (`namespaces "x" not found`) or is being deleted (Forbidden, with
 * its NamespaceTerminating cause), and default, kube-system and kube-public are never deleted. It
 * admits API writes only: a manifest file's pod still makes its namespace, as a static pod does.
 */
import type { ApiContext } from "../../http/context.ts";
import { findNamespace, IMMORTAL_NAMESPACES } from "./namespace-objects.ts";
import { ApiError } from "../../http/status.ts";

/** Refuses the create of `resource` `name` ("" for a generateName not resolved yet) in `namespace` unless the namespace is Active. */
export function admitCreateIn(api: ApiContext, namespace: string, resource: string, name: string): void {
  const found = findNamespace(api.store, namespace, 0);
  if (!found) throw ApiError.notFound("namespaces", namespace);
  if (found.namespace.status.phase !== "Terminating") return;
  throw ApiError.forbidden(resource, name, `unable to create new content in namespace ${namespace} because it is being terminated`, "", [
    { reason: "NamespaceTerminating", message: `namespace ${namespace} is being terminated`, field: "metadata.namespace" },
  ]);
}

/**
 * Refuses the delete of a namespace that must stay: the immortal ones, and kube-node-lease, which
 * holds the node's Lease the agent serves (on a cluster the API server's system-namespaces
 * controller would recreate it within a minute, and the delete would not stick there either).
 */
export function admitNamespaceDelete(name: string): void {
  if (IMMORTAL_NAMESPACES.includes(name) || name === "kube-node-lease") throw ApiError.forbidden("namespaces", name, "this namespace may not be deleted");
}
