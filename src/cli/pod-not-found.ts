/**
 * Where a pod the user asked for is, when it is not where they looked: kubectl's NotFound line, then
 * the namespaces that do hold that name (`web-lab exists in namespace demo: use -n demo`), and for a
 * plain `get pods` a note of what other namespaces hold, which kubectl leaves the user to guess.
 */
import type { StoreReader } from "../store/queries.ts";
import { openStoreReader } from "../store/reader.ts";
import { NotFoundError } from "./errors.ts";

/** The NotFound error for pod `name`, its hint read from the database at `path`. */
export function podNotFound(store: StoreReader, path: string, name: string, options: { includeDeleted: boolean }): NotFoundError {
  const namespaces = store.namespacesOfPod(name, options);
  if (namespaces.length === 1) return new NotFoundError("pods", name, `${name} exists in namespace ${namespaces[0]}: use -n ${namespaces[0]}`);
  if (namespaces.length > 1) return new NotFoundError("pods", name, `${name} exists in namespaces ${namespaces.join(", ")}: use -n NAMESPACE`);
  return new NotFoundError("pods", name, `no pod named ${name} in any namespace of ${path}`);
}

/** `get pods NAME` against the database at `--db` (the default path when absent). */
export function podNotFoundInDatabase(db: string | undefined, name: string): NotFoundError {
  using reader = openStoreReader(db);
  return podNotFound(reader.store, reader.path, name, { includeDeleted: false });
}

/** `(3 pods in other namespaces: use -A)`, or undefined when `namespace` holds every live pod. */
export function otherNamespacesNote(db: string | undefined, namespace: string): string | undefined {
  using reader = openStoreReader(db);
  let others = 0;
  for (const [ns, pods] of reader.store.livePodCounts()) if (ns !== namespace) others += pods;
  if (others === 0) return undefined;
  return others === 1 ? "(1 pod in another namespace: use -A)" : `(${others} pods in other namespaces: use -A)`;
}
