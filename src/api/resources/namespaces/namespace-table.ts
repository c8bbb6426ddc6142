/**
 * Namespaces as `kubectl get ns` shows them and selects them: the API server's columns (NAME,
 * STATUS, AGE; pkg/printers/internalversion) and the field labels it accepts, shared by the list,
 * the get and the watch.
 */
import { timestampSince } from "../../../printers/age.ts";
import type { ApiRequest } from "../../http/http.ts";
import type { V1Namespace } from "./namespace-objects.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "../../http/selectors.ts";
import { column, includeObject, rowObject, type TableColumn, type TableRow, type TableVersion } from "../../http/table.ts";

/** The field labels the API server accepts for namespaces (NamespaceToSelectableFields). */
export const NAMESPACE_FIELDS = ["metadata.name", "status.phase"] as const;

export const NAMESPACE_COLUMNS: TableColumn[] = [
  column("Name", "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", { format: "name" }),
  column("Status", "The status of the namespace"),
  column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"),
];

/** A namespace's Table row at `now`, its object as `includeObject` asks. */
export function namespaceRow(namespace: V1Namespace, now: number, request: ApiRequest, version: TableVersion): TableRow {
  const object = rowObject(namespace, includeObject(request.query), version);
  return { cells: [namespace.metadata.name, namespace.status.phase, timestampSince(namespace.metadata.creationTimestamp, now)], ...(object && { object }) };
}

/** The request's label and field selectors as one match; a malformed one is a 400. */
export function namespaceSelector(query: URLSearchParams): (namespace: V1Namespace) => boolean {
  const labels = parseLabelSelector(query.get("labelSelector"));
  const fields = parseFieldSelector(query.get("fieldSelector"), NAMESPACE_FIELDS);
  return (namespace) => matchesLabels(labels, namespace.metadata.labels) && matchesFields(fields, (field) => (field === "metadata.name" ? namespace.metadata.name : namespace.status.phase));
}
