/**
 * The v1 Namespaces this API serves, drawn in one place for the list, the get, the watch and the
 * writes: `default`, `kube-system`, `kube-public` and `kube-node-lease` (the node's lease), which
 * always exist on an API server; every namespace holding a pod (a manifest file's pod makes its
 * namespace, as a static pod does); and the ones created through the API (stored rows), Active or
 * Terminating. Each carries the `kubernetes.io/metadata.name` label the API server sets
 * (SetDefaults_Namespace) and the `kubernetes` finalizer it requires (PrepareForCreate).
 */
import { stableUid } from "../../../v1/stable-uid.ts";
import { isoTime } from "../../../v1/time.ts";
import { databaseCreatedAt, databaseIdentity } from "../../../store/identity.ts";
import { liveNamespaceRows, namespaceRowNamed, podNamespaces } from "../../../store/namespace-reads.ts";
import type { StoredNamespace } from "../../../store/namespace-store.ts";
import type { StoreReader } from "../../../store/queries.ts";

/** Namespaces NamespaceLifecycle refuses to delete. */
export const IMMORTAL_NAMESPACES: readonly string[] = ["default", "kube-public", "kube-system"];
/**
 * Namespaces that always exist: the immortal ones and kube-node-lease, where the agent serves the
 * node's Lease (on a cluster the API server's system-namespaces controller recreates it).
 */
export const SYSTEM_NAMESPACES: readonly string[] = [...IMMORTAL_NAMESPACES, "kube-node-lease"];
export const NAME_LABEL = "kubernetes.io/metadata.name";

export interface V1Namespace {
  kind: "Namespace";
  apiVersion: "v1";
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { finalizers?: string[] };
  status: { phase: "Active" | "Terminating" };
}

/** A namespace as served, with what a watch needs to place it. */
export interface NamespaceEntry {
  namespace: V1Namespace;
  revision: number;
  /** Since when it exists: its row's creation, its oldest pod's, or 0 for the system namespaces. */
  createdRevision: number;
}

/** The namespaces that exist, by name. `revision` is what a namespace without a row of its own reports. */
export function currentNamespaces(store: StoreReader, revision: number): NamespaceEntry[] {
  const rows = new Map(liveNamespaceRows(store.db).map((row) => [row.name, row]));
  const holding = podNamespaces(store.db);
  const names = new Set([...SYSTEM_NAMESPACES, ...holding.keys(), ...rows.keys()]);
  return [...names].sort().map((name) => {
    const row = rows.get(name);
    return row ? storedEntry(row) : implicitEntry(store, name, revision, SYSTEM_NAMESPACES.includes(name) ? 0 : holding.get(name)!);
  });
}

/** The namespace `name` if it exists (a Terminating one included). */
export function findNamespace(store: StoreReader, name: string, revision: number): NamespaceEntry | undefined {
  const row = namespaceRowNamed(store.db, name);
  if (row && !row.deleted) return storedEntry(row);
  if (SYSTEM_NAMESPACES.includes(name)) return implicitEntry(store, name, revision, 0);
  const created = podNamespaces(store.db).get(name);
  return created === undefined ? undefined : implicitEntry(store, name, revision, created);
}

/** A stored row's Namespace: Terminating from its deletion on (the API server keeps serving it until its content is gone). */
export function storedEntry(row: StoredNamespace): NamespaceEntry {
  const metadata = (row.object.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
  const spec = (row.object.spec ?? { finalizers: ["kubernetes"] }) as V1Namespace["spec"];
  const namespace: V1Namespace = {
    kind: "Namespace",
    apiVersion: "v1",
    metadata: {
      name: row.name,
      uid: row.uid,
      resourceVersion: String(row.revision),
      creationTimestamp: isoTime(row.createdAt),
      ...(row.deletionRequestedAt !== undefined && { deletionTimestamp: isoTime(row.deletionRequestedAt) }),
      labels: { ...metadata.labels, [NAME_LABEL]: row.name },
      ...(metadata.annotations && { annotations: metadata.annotations }),
    },
    spec,
    status: { phase: row.deletionRequestedAt === undefined ? "Active" : "Terminating" },
  };
  return { namespace, revision: row.revision, createdRevision: row.createdRevision };
}

/** A namespace without a row: its uid stable for the database, created with it. */
export function implicitEntry(store: StoreReader, name: string, revision: number, createdRevision: number): NamespaceEntry {
  const namespace: V1Namespace = {
    kind: "Namespace",
    apiVersion: "v1",
    metadata: {
      name,
      uid: implicitNamespaceUid(store, name),
      resourceVersion: String(revision),
      creationTimestamp: isoTime(databaseCreatedAt(store.db)),
      labels: { [NAME_LABEL]: name },
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
  return { namespace, revision, createdRevision };
}

/** The uid a namespace without a row has (and keeps when a delete gives it one). */
export function implicitNamespaceUid(store: StoreReader, name: string): string {
  return stableUid(`${databaseIdentity(store.db)}/namespace/${name}`);
}

/** Whether a namespace holds a pod now (a file's or the API's). */
export function holdsPods(store: StoreReader, name: string): boolean {
  return podNamespaces(store.db).has(name);
}
