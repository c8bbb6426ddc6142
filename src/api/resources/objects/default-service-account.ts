/**
 * The ServiceAccounts controller's part: every namespace has a ServiceAccount named `default`,
 * which a pod that names none runs as. It is made when the namespace is (the system namespaces at
 * the agent's start, a created one at its create, one a pod is created in at that create), and
 * goes with the namespace's delete; a user who deletes it gets it back at the next of these.
 */
import { randomUUID } from "node:crypto";
import type { SqliteObjectStore } from "../../../store/object-store.ts";
import { isoTime } from "../../../v1/time.ts";
import { creationTime } from "../object-meta.ts";

export const DEFAULT_SERVICE_ACCOUNT = "default";

/** Stores `namespace`'s default ServiceAccount unless it has one; true when it was made now. */
export function ensureDefaultServiceAccount(objects: SqliteObjectStore, namespace: string, now: number): boolean {
  const uid = randomUUID();
  const metadata = { name: DEFAULT_SERVICE_ACCOUNT, namespace, uid, creationTimestamp: isoTime(creationTime(now)) };
  return objects.createIfAbsent({ resource: "serviceaccounts", namespace, name: DEFAULT_SERVICE_ACCOUNT }, uid, { metadata });
}
