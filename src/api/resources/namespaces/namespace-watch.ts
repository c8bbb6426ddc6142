/**
 * What a namespaces watch serves: the namespaces that exist (namespace-objects.ts), then every
 * change to them. A stored namespace changes with its row (created, Terminating, gone: DELETED). A
 * namespace without a row exists while it holds a pod, so its changes are read off the pods': the
 * first pod makes it ADDED, the last one gone makes it DELETED, and any other pod change is no
 * change of the namespace (presenceOnly).
 */
import { namespaceRowNamed, namespaceRowsChangedSince, podNamespaces, podNamespacesChangedSince } from "../../../store/namespace-reads.ts";
import type { StoreReader } from "../../../store/queries.ts";
import { currentNamespaces, implicitEntry, storedEntry, SYSTEM_NAMESPACES, type NamespaceEntry, type V1Namespace } from "./namespace-objects.ts";
import { NAMESPACE_COLUMNS, namespaceRow, namespaceSelector } from "./namespace-table.ts";
import type { WatchChange, WatchKind, WatchObject } from "../../watch/watch-kind.ts";

function change(entry: NamespaceEntry, fields: Partial<WatchChange> = {}): WatchChange {
  const { namespace } = entry;
  return { key: namespace.metadata.name, revision: entry.revision, createdRevision: entry.createdRevision, deleted: false, namespace: "", object: namespace as unknown as WatchObject, ...fields };
}

/** Namespace changes after `revision`, oldest first. */
function namespacesChangedSince(store: StoreReader, revision: number): WatchChange[] {
  const holding = podNamespaces(store.db);
  const exists = (name: string) => SYSTEM_NAMESPACES.includes(name) || holding.has(name);
  const changes: WatchChange[] = [];
  for (const row of namespaceRowsChangedSince(store.db, revision)) {
    if (!row.deleted) changes.push(change(storedEntry(row)));
    // Gone as a created namespace, it still exists while it holds a pod: served as one without a row, changed.
    else if (exists(row.name)) changes.push(change(implicitEntry(store, row.name, row.revision, holding.get(row.name) ?? 0)));
    else changes.push(change(storedEntry(row), { deleted: true }));
  }
  for (const [name, changedAt] of podNamespacesChangedSince(store.db, revision)) {
    if (SYSTEM_NAMESPACES.includes(name)) continue;
    // A row governs while it lives, and a row written after the pod change (the namespace finished with its last pod) tells that change itself.
    const row = namespaceRowNamed(store.db, name);
    if (row && (!row.deleted || row.revision > changedAt)) continue;
    const created = holding.get(name);
    changes.push(change(implicitEntry(store, name, changedAt, created ?? changedAt), { deleted: created === undefined, presenceOnly: true }));
  }
  return changes.sort((a, b) => a.revision - b.revision);
}

export const namespaceKind: WatchKind = {
  resource: "namespaces",
  kind: "Namespace",
  // Terminating moves a namespace out of a status.phase=Active selector: the watcher tracks what the client holds.
  mutableFields: true,
  matcher: (request) => {
    const matches = namespaceSelector(request.query);
    return (object) => matches(object as unknown as V1Namespace);
  },
  current: (store) => currentNamespaces(store, store.revision()).map((entry) => change(entry)),
  // Namespaces and the pods that make them are few: one read takes every change.
  changedSince: (store, revision) => namespacesChangedSince(store, revision),
  columns: NAMESPACE_COLUMNS,
  row: (object, now, request, version) => namespaceRow(object as unknown as V1Namespace, now, request, version),
};
