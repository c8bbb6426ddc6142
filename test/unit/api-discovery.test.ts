/** Accept negotiation and discovery in both forms, as kubectl and older clients ask for them. */
import { expect, test } from "bun:test";
import { discoveryRoutes } from "../../src/api/discovery/discovery.ts";
import type { ApiRequest } from "../../src/api/http/http.ts";
import { aggregatedDiscoveryVersion, tableVersion } from "../../src/api/http/negotiate.ts";

const KUBECTL_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
const KUBECTL_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

const accept = (value: string) => new Headers({ Accept: value });

test("a Table is what kubectl get asks for first; protobuf-first and plain JSON get JSON", () => {
  expect(tableVersion(accept(KUBECTL_TABLE))).toBe("v1");
  expect(tableVersion(accept("application/json; as=Table; v=v1beta1; g=meta.k8s.io, application/json"))).toBe("v1beta1");
  expect(tableVersion(accept("application/vnd.kubernetes.protobuf,application/json"))).toBeUndefined();
  expect(tableVersion(accept("application/json, */*"))).toBeUndefined();
  expect(tableVersion(new Headers())).toBeUndefined();
  // A Table version we do not serve is skipped for the next offer.
  expect(tableVersion(accept("application/json;as=Table;v=v2;g=meta.k8s.io,application/json"))).toBeUndefined();
});

test("aggregated discovery: v2 first, v2beta1 when that is all the client knows, legacy otherwise", () => {
  expect(aggregatedDiscoveryVersion(accept(KUBECTL_DISCOVERY))).toBe("v2");
  expect(aggregatedDiscoveryVersion(accept("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"))).toBe("v2beta1");
  expect(aggregatedDiscoveryVersion(accept("application/json, */*"))).toBeUndefined();
});

function get(path: string, acceptHeader: string, host = "127.0.0.1:6443"): Promise<Response> {
  const route = discoveryRoutes.find((candidate) => candidate.path === path)!;
  const url = new URL(`https://${host}${path}`);
  const headers = accept(acceptHeader);
  headers.set("Host", host);
  const request = { method: "GET", url, headers, params: {}, query: url.searchParams } as unknown as ApiRequest;
  return Promise.resolve(route.handle(request, undefined as never));
}

test("/api aggregated carries the exact Content-Type and every served resource with kind and scope", async () => {
  const response = await get("/api", KUBECTL_DISCOVERY);
  expect(response.headers.get("content-type")).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  const body = (await response.json()) as { items: { versions: { resources: { resource: string }[] }[] }[] };
  expect(body).toMatchObject({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2" });
  const resources = body.items[0]!.versions[0]!.resources;
  expect(resources.map((resource: { resource: string }) => resource.resource)).toEqual(["configmaps", "events", "namespaces", "nodes", "pods", "secrets", "serviceaccounts", "services"]);
  expect(resources.find((resource: { resource: string }) => resource.resource === "namespaces")).toMatchObject({
    responseKind: { group: "", version: "v1", kind: "Namespace" },
    scope: "Cluster",
    shortNames: ["ns"],
    verbs: ["create", "delete", "get", "list", "watch"],
  });
  expect(resources.find((resource: { resource: string }) => resource.resource === "pods")).toMatchObject({
    responseKind: { group: "", version: "v1", kind: "Pod" },
    scope: "Namespaced",
    shortNames: ["po"],
    categories: ["all"],
    verbs: ["get", "list", "watch"],
  });
  const apis = await get("/apis", KUBECTL_DISCOVERY);
  // The named groups are the review APIs (api-auth-reviews.test.ts) and metrics.k8s.io (api-metrics.test.ts).
  expect(((await apis.json()) as { items: { metadata: { name: string } }[] }).items.map((item) => item.metadata.name)).toEqual(["authentication.k8s.io", "authorization.k8s.io", "metrics.k8s.io"]);
});

test("legacy discovery: APIVersions, the APIGroupList and the v1 APIResourceList with subresources", async () => {
  // serverAddressByClientCIDRs is required by the Python client (CoreApi().get_api_versions() raises without it): the address the client dialed.
  expect(await (await get("/api", "application/json, */*")).json()).toEqual({ kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1:6443" }] });
  expect(await (await get("/api", "application/json", "[::1]:7443")).json()).toMatchObject({ serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "[::1]:7443" }] });
  expect(await (await get("/apis", "application/json")).json()).toMatchObject({ kind: "APIGroupList", apiVersion: "v1", groups: [{ name: "authentication.k8s.io" }, { name: "authorization.k8s.io" }, { name: "metrics.k8s.io" }] });
  const list = (await (await get("/api/v1", "application/json, */*")).json()) as { resources: { name: string }[] };
  expect(list).toMatchObject({ kind: "APIResourceList", groupVersion: "v1" });
  expect(list.resources.map((resource: { name: string }) => resource.name)).toEqual(["configmaps", "events", "namespaces", "nodes", "pods", "pods/attach", "pods/ephemeralcontainers", "pods/exec", "pods/log", "pods/portforward", "pods/resize", "pods/status", "secrets", "serviceaccounts", "serviceaccounts/token", "services"]);
  expect(list.resources.find((resource: { name: string }) => resource.name === "namespaces")).toMatchObject({ namespaced: false, kind: "Namespace", shortNames: ["ns"] });
  expect(list.resources.find((resource: { name: string }) => resource.name === "nodes")).toMatchObject({ namespaced: false, kind: "Node", shortNames: ["no"] });
});
