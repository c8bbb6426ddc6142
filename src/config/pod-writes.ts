/**
 * The agent's side of the API's pod writes, which the pod sources provide (pod-sources.ts) and the
 * API's write routes use under `run`.
 */
import type { AdmittedPod } from "../manifest/admit.ts";
import type { ApiPodStore } from "../store/api-pod-store.ts";
import type { NamespaceStore } from "../store/namespace-store.ts";
import type { SqliteObjectStore } from "../store/object-store.ts";

/**
 * What the write routes use under `run`: the agent's stores of API pods and namespaces (its write connection), the
 * agent's admission rules, and the source to wake once a write is committed.
 */
export interface PodWrites {
  store: ApiPodStore;
  /** The namespaces created through the API, on the same connection and counter (a namespace's delete deletes its pods in one transaction). */
  namespaces: NamespaceStore;
  /** The ConfigMaps, Secrets and ServiceAccounts created through the API, on the same connection and counter (a namespace's delete deletes them too). */
  objects: SqliteObjectStore;
  /**
   * Admits a pod by the rules a manifest file meets on this agent (`strict`: unknown fields
   * refused); a pod being created (`stage` "create") may not have ephemeral containers, a stored
   * one (the default) may. Throws ManifestError.
   */
  admit(object: Record<string, unknown>, identity: { uid: string; createdAt: number }, strict: boolean, stage?: "create" | "stored"): AdmittedPod;
  /** The manifest file whose pod has this namespace and name (as the API names it), if any. */
  fileOf(namespace: string, name: string): string | undefined;
  /** Tells the API pod source that a write was committed: the loop wakes on it. */
  changed(): void;
}
