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
export const CORE_RESOURCES: readonly ServedResource[] = [
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
      { subresource: "exec", kind: "PodExecOptions", verbs: ["create", "get"] },
      { subresource: "log", kind: "Pod", verbs: ["get"] },
      { subresource: "status", kind: "Pod", verbs: ["get"] },
    ],
  },
];

export const SERVED_GROUPS: readonly ServedGroup[] = [{ name: "", versions: [{ version: "v1", resources: CORE_RESOURCES }] }];

/** The named groups (`/apis`), in the order discovery lists them. */
export function namedGroups(): readonly ServedGroup[] {
  return SERVED_GROUPS.filter((group) => group.name !== "");
}
