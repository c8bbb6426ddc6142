/**
 * What the API serves, by group and version: the one table both forms of discovery (discovery.ts)
 * are drawn from. Only what is served is listed: an advertised group whose resource list then
 * fails prints an error on every kubectl command.
 */

export interface ServedResource {
  resource: string;
  singular: string;
  kind: string;
  scope: "Namespaced" | "Cluster";
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources: { subresource: string; kind: string; verbs: string[] }[];
}

export interface ServedVersion {
  version: string;
  resources: readonly ServedResource[];
}

export interface ServedGroup {
  /** "" is the core group (`/api/v1`); any other is served under `/apis/GROUP/VERSION`. */
  name: string;
  /** The preferred version first. */
  versions: readonly ServedVersion[];
}

const READ = ["get", "list", "watch"];

/** The core group's v1 resources, by name. */
const OBJECT_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];

export const CORE_RESOURCES: readonly ServedResource[] = [
  // Stored here for the pods that reference them (objects-api.ts); written under `run` only.
  { resource: "configmaps", singular: "configmap", kind: "ConfigMap", scope: "Namespaced", verbs: OBJECT_VERBS, shortNames: ["cm"], subresources: [] },
  { resource: "events", singular: "event", kind: "Event", scope: "Namespaced", verbs: READ, shortNames: ["ev"], subresources: [] },
  // Created and deleted under `run` (refused under `serve`); never updated here.
  { resource: "namespaces", singular: "namespace", kind: "Namespace", scope: "Cluster", verbs: ["create", "delete", "get", "list", "watch"], shortNames: ["ns"], subresources: [] },
  { resource: "nodes", singular: "node", kind: "Node", scope: "Cluster", verbs: READ, shortNames: ["no"], subresources: [] },
  {
    resource: "pods",
    singular: "pod",
    kind: "Pod",
    scope: "Namespaced",
    verbs: READ,
    shortNames: ["po"],
    categories: ["all"],
    subresources: [
      { subresource: "attach", kind: "PodAttachOptions", verbs: ["create", "get"] },
      { subresource: "ephemeralcontainers", kind: "Pod", verbs: ["get", "patch", "update"] },
      { subresource: "exec", kind: "PodExecOptions", verbs: ["create", "get"] },
      { subresource: "log", kind: "Pod", verbs: ["get"] },
      { subresource: "portforward", kind: "PodPortForwardOptions", verbs: ["create", "get"] },
      { subresource: "resize", kind: "Pod", verbs: ["get", "patch", "update"] },
      { subresource: "status", kind: "Pod", verbs: ["get"] },
    ],
  },
  { resource: "secrets", singular: "secret", kind: "Secret", scope: "Namespaced", verbs: OBJECT_VERBS, subresources: [] },
  { resource: "serviceaccounts", singular: "serviceaccount", kind: "ServiceAccount", scope: "Namespaced", verbs: OBJECT_VERBS, shortNames: ["sa"], subresources: [{ subresource: "token", kind: "TokenRequest", verbs: ["create"] }] },
  // Always empty (services-api.ts): listed so that cluster-info and get all find the resource.
  { resource: "services", singular: "service", kind: "Service", scope: "Namespaced", verbs: READ, shortNames: ["svc"], categories: ["all"], subresources: [] },
];

/** A review: a create that stores nothing (auth-reviews.ts). */
function review(resource: string, kind: string): ServedResource {
  return { resource, singular: resource.replace(/s$/, ""), kind, scope: "Cluster", verbs: ["create"], subresources: [] };
}

const SELF_SUBJECT_REVIEWS = [review("selfsubjectreviews", "SelfSubjectReview")];

/** metrics-server's resources (metrics-api.ts): kubectl top looks for them in discovery first. */
const METRICS_RESOURCES: readonly ServedResource[] = [
  { resource: "nodes", singular: "", kind: "NodeMetrics", scope: "Cluster", verbs: ["get", "list"], subresources: [] },
  { resource: "pods", singular: "", kind: "PodMetrics", scope: "Namespaced", verbs: ["get", "list"], subresources: [] },
];

export const SERVED_GROUPS: readonly ServedGroup[] = [
  { name: "", versions: [{ version: "v1", resources: CORE_RESOURCES }] },
  // v1beta1 too: kubectl 1.27's `auth whoami` asks for it (1.28 and later ask v1 first).
  { name: "authentication.k8s.io", versions: [{ version: "v1", resources: SELF_SUBJECT_REVIEWS }, { version: "v1beta1", resources: SELF_SUBJECT_REVIEWS }] },
  {
    name: "authorization.k8s.io",
    versions: [{ version: "v1", resources: [review("selfsubjectaccessreviews", "SelfSubjectAccessReview"), review("selfsubjectrulesreviews", "SelfSubjectRulesReview")] }],
  },
  { name: "metrics.k8s.io", versions: [{ version: "v1beta1", resources: METRICS_RESOURCES }] },
];

/** The named groups (`/apis`), in the order discovery lists them. */
export function namedGroups(): readonly ServedGroup[] {
  return SERVED_GROUPS.filter((group) => group.name !== "");
}
