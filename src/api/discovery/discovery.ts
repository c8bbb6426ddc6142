/**
 * Discovery: which resources this server serves, in the aggregated form kubectl asks for first
 * (`/api` and `/apis` as APIGroupDiscoveryList, with its exact Content-Type) and the legacy form
 * older clients and `Accept: application/json` get (`/api` as APIVersions, `/apis` as
 * APIGroupList, then `/api/v1`, `/apis/GROUP` and `/apis/GROUP/VERSION`). Both are drawn from one
 * table (discovery-resources.ts).
 */
import { namedGroups, SERVED_GROUPS, type ServedGroup, type ServedResource, type ServedVersion } from "./discovery-resources.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { aggregatedDiscoveryContentType, aggregatedDiscoveryVersion } from "../http/negotiate.ts";
import { ApiError } from "../http/status.ts";

function aggregatedResource(group: string, version: string, served: ServedResource) {
  return {
    resource: served.resource,
    singularResource: served.singular,
    responseKind: { group, version, kind: served.kind },
    scope: served.scope,
    verbs: served.verbs,
    ...(served.shortNames ? { shortNames: served.shortNames } : {}),
    ...(served.categories ? { categories: served.categories } : {}),
    subresources: served.subresources.map((sub) => ({ subresource: sub.subresource, responseKind: { group, version, kind: sub.kind }, verbs: sub.verbs })),
  };
}

function aggregatedGroup(group: ServedGroup) {
  return {
    metadata: { name: group.name, creationTimestamp: null },
    versions: group.versions.map((version) => ({
      version: version.version,
      freshness: "Current",
      resources: version.resources.map((served) => aggregatedResource(group.name, version.version, served)),
    })),
  };
}

/** An APIResourceList: `/api/v1` or `/apis/GROUP/VERSION`. */
function legacyResourceList(group: string, version: ServedVersion) {
  const groupVersion = group ? `${group}/${version.version}` : version.version;
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion,
    resources: version.resources.flatMap((served) => [
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

/** An APIGroup as `/apis` lists it and `/apis/GROUP` serves it. */
function legacyGroup(group: ServedGroup) {
  const versions = group.versions.map((version) => ({ groupVersion: `${group.name}/${version.version}`, version: version.version }));
  return { name: group.name, versions, preferredVersion: versions[0]! };
}

/**
 * `/api` as APIVersions. serverAddressByClientCIDRs is where clients reach this server (the Python
 * client refuses an APIVersions without it): the address the client dialed, from its Host header,
 * for every client network (the API server's 0.0.0.0/0 entry for its external address).
 */
function apiVersions(request: ApiRequest) {
  const serverAddress = request.headers.get("host") || request.url.host;
  return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }] };
}

/** `/api` or `/apis`: aggregated when the client asks for it (never a 406: kubectl has no fallback). */
function discoveryRoute(path: "/api" | "/apis"): Route {
  return {
    method: "GET",
    path,
    handle(request) {
      const version = aggregatedDiscoveryVersion(request.headers);
      const groups = path === "/api" ? SERVED_GROUPS.filter((group) => group.name === "") : namedGroups();
      if (version) {
        const body = { kind: "APIGroupDiscoveryList", apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items: groups.map(aggregatedGroup) };
        return new Response(JSON.stringify(body), { headers: { "Content-Type": aggregatedDiscoveryContentType(version) } });
      }
      return Response.json(path === "/api" ? apiVersions(request) : { kind: "APIGroupList", apiVersion: "v1", groups: groups.map(legacyGroup) });
    },
  };
}

function namedGroup(name: string): ServedGroup {
  const group = namedGroups().find((candidate) => candidate.name === name);
  // The API server's router answers an unserved group with its bare 404.
  if (!group) throw new ApiError(404, "NotFound", "the server could not find the requested resource", {});
  return group;
}

export const discoveryRoutes: Route[] = [
  discoveryRoute("/api"),
  discoveryRoute("/apis"),
  { method: "GET", path: "/api/v1", handle: () => Response.json(legacyResourceList("", SERVED_GROUPS[0]!.versions[0]!)) },
  { method: "GET", path: "/apis/:group", handle: (request) => Response.json({ kind: "APIGroup", apiVersion: "v1", ...legacyGroup(namedGroup(request.params.group!)) }) },
  {
    method: "GET",
    path: "/apis/:group/:version",
    handle(request) {
      const version = namedGroup(request.params.group!).versions.find((candidate) => candidate.version === request.params.version);
      if (!version) throw new ApiError(404, "NotFound", "the server could not find the requested resource", {});
      return Response.json(legacyResourceList(request.params.group!, version));
    },
  },
];
