/**
 * What the watch machinery (watch.ts, watch-hub.ts) asks of a resource it serves: the current
 * objects, the rows changed after a revision, selectors and Table rows. Each resource implements it
 * beside its list (resources/), so a watch line and a list item for one object are the same and
 * the machinery never imports a resource.
 */
import type { StoreReader } from "../../store/queries.ts";
import type { ApiRequest } from "../http/http.ts";
import type { TableColumn, TableRow, TableVersion } from "../http/table.ts";

export type WatchObject = Record<string, any> & { metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> } };

/** One row as a watch hands it on. */
export interface WatchChange {
  /** Identity across changes: the pod's uid, the event's id. */
  key: string;
  revision: number;
  /** The revision that inserted the row: newer than a watcher's cursor means ADDED. */
  createdRevision: number;
  deleted: boolean;
  /** The object's namespace; "" for a cluster-scoped object. */
  namespace: string;
  object: WatchObject;
  /**
   * The object itself did not change, only (perhaps) whether it exists: a watcher that holds it
   * and still sees it sends nothing (a namespace that exists because it holds pods, when a pod changes).
   */
  presenceOnly?: boolean;
}

/** Does an object match the request's `fieldSelector` and `labelSelector`. */
export type ObjectMatcher = (object: WatchObject) => boolean;

export interface WatchKind {
  /** `pods`: the resource, as the API names it. */
  resource: string;
  /** `Pod`: the kind a bookmark carries. */
  kind: string;
  /**
   * Whether a change can move an object into or out of a field selector (a pod's status.phase):
   * the watcher then remembers which objects the client holds, to send ADDED/DELETED for them.
   */
  mutableFields: boolean;
  /** The request's selectors; a malformed one is the list's 400. */
  matcher(request: ApiRequest): ObjectMatcher;
  /** The live objects, in list order. */
  current(store: StoreReader, namespace: string | undefined, nodeName: string): WatchChange[];
  /** Rows changed after `revision`, oldest first; at most about `limit` (read on from the last). */
  changedSince(store: StoreReader, revision: number, limit: number, nodeName: string): WatchChange[];
  columns: TableColumn[];
  row(object: WatchObject, now: number, request: ApiRequest, version: TableVersion): TableRow;
}

