/**
 * Services: served, empty and read-only, so clients that look for them (kubectl cluster-info, get
 * all) find an API server without any, and writes get the API server's 405 for an unsupported verb.
 */
import { describe, expect, test } from "bun:test";
import { discoveryRoutes } from "../../src/api/discovery/discovery.ts";
import { serviceRoutes } from "../../src/api/resources/services-api.ts";
import { deprecatedWatchRoutes } from "../../src/api/resources/watch-paths.ts";
import { apiContext, call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";
import { apiHarness, apiRequest, readWatch, settle } from "../api-watch-fixtures.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

describe("services", () => {
  test("lists are empty (cluster-info's kube-system query included), as JSON and as a Table with the API server's columns; a get is NotFound", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    using api = apiContext(h.dbPath, h.clock);
    const clusterInfo = await call(serviceRoutes, "GET", "/api/v1/namespaces/kube-system/services", api, { query: { labelSelector: "kubernetes.io/cluster-service=true" } });
    expect(clusterInfo).toMatchObject({ status: 200, body: { kind: "ServiceList", apiVersion: "v1", items: [] } });
    expect(clusterInfo.body.metadata.resourceVersion).toMatch(/^\d+$/);
    const all = await call(serviceRoutes, "GET", "/api/v1/services", api, { accept: TABLE_ACCEPT });
    expect(all.body).toMatchObject({ kind: "Table", rows: [] });
    expect(all.body.columnDefinitions.map((c: any) => [c.name, c.priority])).toEqual([["Name", 0], ["Type", 0], ["Cluster-IP", 0], ["External-IP", 0], ["Port(s)", 0], ["Age", 0], ["Selector", 1]]);
    const one = await call(serviceRoutes, "GET", "/api/v1/namespaces/default/services/kubernetes", api);
    expect(one).toMatchObject({ status: 404, body: { message: 'services "kubernetes" not found', details: { name: "kubernetes", kind: "services" } } });
    const badSelector = await call(serviceRoutes, "GET", "/api/v1/services", api, { query: { fieldSelector: "spec.nodeName=x" } });
    expect(badSelector.status).toBe(400);
    h.agent.close();
  });

  test("every write is the API server's 405 for a verb the resource does not support", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    using api = apiContext(h.dbPath, h.clock);
    const cases: [string, string, string][] = [
      ["POST", "/api/v1/namespaces/default/services", "create"],
      ["PUT", "/api/v1/namespaces/default/services/web", "update"],
      ["PATCH", "/api/v1/namespaces/default/services/web", "patch"],
      ["DELETE", "/api/v1/namespaces/default/services/web", "delete"],
      ["DELETE", "/api/v1/namespaces/default/services", "deletecollection"],
    ];
    for (const [method, path, action] of cases) {
      const answer = await call(serviceRoutes, method, path, api, { body: "{}" });
      expect({ method, path, status: answer.status, body: answer.body }).toEqual({
        method,
        path,
        status: 405,
        body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "MethodNotAllowed", message: `${action} is not supported on resources of kind "services"`, details: { kind: "services" }, code: 405 },
      });
    }
    h.agent.close();
  });

  test("a watch stays open and sends nothing; the deprecated path too", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    const list = serviceRoutes.find((route) => route.path === "/api/v1/namespaces/:namespace/services")!;
    const watch = readWatch(list.handle(apiRequest("/api/v1/namespaces/default/services?watch=true", { params: { namespace: "default" } }), h.api) as Response);
    const old = readWatch(deprecatedWatchRoutes.find((route) => route.path === "/api/v1/watch/services")!.handle(apiRequest("/api/v1/watch/services"), h.api) as Response);
    await h.advance(1);
    await settle();
    expect(watch.lines).toEqual([]);
    expect(old.lines).toEqual([]);
    expect(watch.state.ended).toBe(false);
    h.close();
  });

  test("in discovery: namespaced, read verbs, short name svc, category all", async () => {
    const route = discoveryRoutes.find((candidate) => candidate.path === "/api/v1")!;
    const url = new URL("https://127.0.0.1/api/v1");
    const list = (await (await route.handle({ method: "GET", url, headers: new Headers(), params: {}, query: url.searchParams } as never, undefined as never)).json()) as any;
    expect(list.resources.find((resource: any) => resource.name === "services")).toEqual({ name: "services", singularName: "service", namespaced: true, kind: "Service", verbs: ["get", "list", "watch"], shortNames: ["svc"], categories: ["all"] });
  });
});
