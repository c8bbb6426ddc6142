/**
 * What a watch serves, per resource: the current objects (for RV 0), the rows changed after a
 * revision, each row's v1 object with its resourceVersion, the field selector's fields and the
 * Table row. The selector parser and the Table rows come through `WatchSeams` (interim stand-ins
 * in watch-interim.ts until api-objects' selectors.ts and table.ts replace them).
 */
import { eventObject } from "../cli/events-format.ts";
import type { V1Pod } from "../status/v1.ts";
import type { EventRow, PodRow, StoreReader } from "../store/queries.ts";
import { tableVersion } from "./negotiate.ts";
import { EVENT_COLUMNS, POD_COLUMNS, eventCellsOf, parseSelectors, podCellsOf, type ColumnDefinition, type ObjectMatcher } from "./watch-interim.ts";

export type WatchObject = Record<string, any> & { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string> } };

/** One row as a watch hands it on. */
export interface WatchChange {
  /** Identity across changes: the pod's uid, the event's id. */
  key: string;
  revision: number;
  /** The revision that inserted the row: newer than a watcher's cursor means ADDED. */
  createdRevision: number;
  deleted: boolean;
  namespace: string;
  object: WatchObject;
}

export interface WatchKind {
  resource: "pods" | "events";
  kind: "Pod" | "Event";
  /**
   * Whether a change can move an object into or out of a field selector (a pod's status.phase):
   * the watcher then remembers which objects the client holds, to send ADDED/DELETED for them.
   */
  mutableFields: boolean;
  /** The live objects, in list order. */
  current(store: StoreReader, namespace: string | undefined, nodeName: string): WatchChange[];
  /** Rows changed after `revision`, oldest first; at most about `limit` (read on from the last). */
  changedSince(store: StoreReader, revision: number, limit: number, nodeName: string): WatchChange[];
  field(object: WatchObject, name: string): string | undefined;
  columns: ColumnDefinition[];
  cells(object: WatchObject, now: number): unknown[];
}

/** The seam to api-objects' modules: swap the selector parser for selectors.ts. */
export const WatchSeams = {
  parseSelectors: (kind: WatchKind, fieldSelector: string | null, labelSelector: string | null): ObjectMatcher => parseSelectors(fieldSelector, labelSelector, FIELD_LABELS[kind.resource]),
  /** The Table version the client asks for (`v1`, `v1beta1`), undefined for plain objects. */
  tableVersion,
};

const FIELD_LABELS = {
  pods: ["metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "status.phase", "status.podIP", "status.nominatedNodeName"],
  events: [
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
  ],
} as const;

function path(object: unknown, dotted: string): string | undefined {
  let value: any = object;
  for (const part of dotted.split(".")) value = value?.[part];
  return value === undefined || value === null ? undefined : String(value);
}

function podChange(row: PodRow): WatchChange {
  const object = row.object as V1Pod & WatchObject;
  return {
    key: row.uid,
    revision: row.revision,
    createdRevision: row.createdRevision,
    deleted: row.deletedAt !== null,
    namespace: row.namespace,
    object: { ...object, metadata: { ...object.metadata, resourceVersion: String(row.revision) } },
  };
}

export const podKind: WatchKind = {
  resource: "pods",
  kind: "Pod",
  mutableFields: true,
  current(store, namespace) {
    // A refused manifest is a pod STATUS Invalid, as `minikubelet get pods` lists it.
    const refused = store.refusedPods({ namespace }).map((row) => ({ ...row, deletedAt: null, createdRevision: row.revision }));
    return [...store.livePods({ namespace }), ...refused].map(podChange).sort((a, b) => listOrder(a).localeCompare(listOrder(b)));
  },
  // Pods are few (retention drops deleted ones): one read takes every change.
  changedSince: (store, revision) => store.podsChangedSince(revision).map(podChange),
  field: (object, name) => (name === "metadata.namespace" ? (object.metadata.namespace ?? "default") : path(object, name)),
  columns: POD_COLUMNS,
  cells: (object, now) => podCellsOf(object as unknown as V1Pod, now),
};

function listOrder(change: WatchChange): string {
  return `${change.namespace}\u0000${change.object.metadata.name}`;
}

function eventChange(row: EventRow, nodeName: string): WatchChange {
  const object = eventObject(row) as WatchObject;
  return {
    key: String(row.id),
    revision: row.revision,
    createdRevision: row.createdRevision,
    deleted: false,
    namespace: row.namespace,
    object: {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(row.revision) },
      source: { component: "kubelet", host: nodeName },
      eventTime: null,
    },
  };
}

export const eventKind: WatchKind = {
  resource: "events",
  kind: "Event",
  mutableFields: false,
  current: (store, namespace, nodeName) => store.events({ namespace }).map((row) => eventChange(row, nodeName)),
  changedSince: (store, revision, limit, nodeName) => store.eventsChangedSince(revision, limit).map((row) => eventChange(row, nodeName)),
  field: (object, name) => (name === "source" ? object.source?.component : path(object, name)),
  columns: EVENT_COLUMNS,
  cells: (object, now) => eventCellsOf(object, now),
};
