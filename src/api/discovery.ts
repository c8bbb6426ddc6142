/**
 * Discovery: which resources this server serves, in the aggregated form kubectl asks for first
 * (`/api` and `/apis` as APIGroupDiscoveryList, with its exact Content-Type) and the legacy form
 * older clients and `Accept: application/json` get (`/api`, `/apis`, `/api/v1`). One table of
 * resources feeds both. Only the core group is served: an advertised group that then fails would
 * print an error on every kubectl command.
 */
import type { Route } from "./http.ts";
import { aggregatedDiscoveryContentType, aggregatedDiscoveryVersion } from "./negotiate.ts";

interface ServedResource {
  resource: string;
  singular: string;
  kind: string;
  scope: "Namespaced" | "Cluster";
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources: { subresource: string; kind: string; verbs: string[] }[];
}

/** What the read API serves; writes are answered 405, so they are not advertised. */
const READ = ["get", "list", "watch"];
export const SERVED_RESOURCES: readonly ServedResource[] = [
  { resource: "events", singular: "event", kind: "Event", scope: "Namespaced", verbs: READ, shortNames: ["ev"], subresources: [] },
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
      { subresource: "exec", kind: "PodExecOptions", verbs: ["create", "get"] },
      { subresource: "log", kind: "Pod", verbs: ["get"] },
      { subresource: "status", kind: "Pod", verbs: ["get"] },
    ],
  },
];

function aggregatedCore() {
  return {
    metadata: { name: "", creationTimestamp: null },
    versions: [
      {
        version: "v1",
        freshness: "Current",
        resources: SERVED_RESOURCES.map((served) => ({
          resource: served.resource,
          singularResource: served.singular,
          responseKind: { group: "", version: "v1", kind: served.kind },
          scope: served.scope,
          verbs: served.verbs,
          ...(served.shortNames ? { shortNames: served.shortNames } : {}),
          ...(served.categories ? { categories: served.categories } : {}),
          subresources: served.subresources.map((sub) => ({
            subresource: sub.subresource,
            responseKind: { group: "", version: "v1", kind: sub.kind },
            verbs: sub.verbs,
          })),
        })),
      },
    ],
  };
}

function legacyResourceList() {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: "v1",
    resources: SERVED_RESOURCES.flatMap((served) => [
      {
        name: served.resource,
        singularName: served.singular,
        namespaced: served.scope === "Namespaced",
        kind: served.kind,
        verbs: served.verbs,
        ...(served.shortNames ? { shortNames: served.shortNames } : {}),
        ...(served.categories ? { categories: served.categories } : {}),
      },
      ...served.subresources.map((sub) => ({ name: `${served.resource}/${sub.subresource}`, singularName: "", namespaced: served.scope === "Namespaced", kind: sub.kind, verbs: sub.verbs })),
    ]),
  };
}

/** `/api` or `/apis`: aggregated when the client asks for it (never a 406: kubectl has no fallback). */
function discoveryRoute(path: "/api" | "/apis"): Route {
  return {
    method: "GET",
    path,
    handle(request) {
      const version = aggregatedDiscoveryVersion(request.headers);
      if (version) {
        const body = { kind: "APIGroupDiscoveryList", apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items: path === "/api" ? [aggregatedCore()] : [] };
        return new Response(JSON.stringify(body), { headers: { "Content-Type": aggregatedDiscoveryContentType(version) } });
      }
      return Response.json(path === "/api" ? { kind: "APIVersions", versions: ["v1"] } : { kind: "APIGroupList", apiVersion: "v1", groups: [] });
    },
  };
}

export const discoveryRoutes: Route[] = [
  discoveryRoute("/api"),
  discoveryRoute("/apis"),
  { method: "GET", path: "/api/v1", handle: () => Response.json(legacyResourceList()) },
];
