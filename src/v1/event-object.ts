/**
 * The one v1 Event shape, as the API server serves an event the kubelet posted: what the API lists
 * and watches and what `minikubelet events -o json|yaml` prints, from the same row.
 */
import { stableUid } from "./stable-uid.ts";
import { isoTime } from "./time.ts";

/** What an event row holds (the store's EventRow has these and more). */
export interface EventFacts {
  id: number;
  podUid: string;
  namespace: string;
  pod: string;
  container: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  firstAt: number;
  lastAt: number;
  revision: number;
}

export interface V1Event {
  kind: "Event";
  apiVersion: "v1";
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; creationTimestamp: string };
  involvedObject: { kind: "Pod" | "Node"; namespace: string; name: string; uid: string; apiVersion: "v1"; fieldPath?: string };
  reason: string;
  message: string;
  source: { component: "kubelet"; host: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: string;
  /** A MicroTime when set; the kubelet's core/v1 events leave it null. */
  eventTime: null;
  reportingComponent: "kubelet";
  reportingInstance: string;
}

/**
 * The Event the kubelet would have posted for `row`. The name is the pod's name and the row id in
 * hex, stable for the row (its repeats raise count, not the name), like the kubelet's `pod.<hex>`.
 */
export function apiEvent(row: EventFacts, nodeName: string): V1Event {
  const id = row.id.toString(16).padStart(16, "0");
  // The node's own events (APIListenFailed) are recorded with the node's name as the uid, as the
  // kubelet posts them: the object is the Node, cluster-scoped, and `describe node` asks for it so.
  const involvedObject: V1Event["involvedObject"] = isNodeEvent(row)
    ? { kind: "Node", namespace: "", name: row.pod, uid: row.podUid, apiVersion: "v1" }
    : { kind: "Pod", namespace: row.namespace, name: row.pod, uid: row.podUid, apiVersion: "v1" };
  if (row.container) involvedObject.fieldPath = `spec.containers{${row.container}}`;
  return {
    kind: "Event",
    apiVersion: "v1",
    metadata: { name: `${row.pod}.${id}`, namespace: row.namespace, uid: stableUid(`${row.podUid}/event/${row.id}`), resourceVersion: String(row.revision), creationTimestamp: isoTime(row.firstAt) },
    involvedObject,
    reason: row.reason,
    message: row.message,
    source: { component: "kubelet", host: nodeName },
    firstTimestamp: isoTime(row.firstAt),
    lastTimestamp: isoTime(row.lastAt),
    count: row.count,
    type: row.type,
    eventTime: null,
    reportingComponent: "kubelet",
    reportingInstance: nodeName,
  };
}

/** A pod's uid is a hash, never its name; a node event's uid is the node's name. */
function isNodeEvent(row: EventFacts): boolean {
  return row.podUid === row.pod && row.container === "";
}
