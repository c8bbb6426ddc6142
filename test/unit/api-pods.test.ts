import { expect, test } from "bun:test";
import { refusedPodObject } from "../../src/v1/refused-pod.ts";
import { podRoutes } from "../../src/api/resources/pods/pods-api.ts";
import { writeRefusalRoutes } from "../../src/api/resources/pods/write-refusals.ts";
import { getCommand } from "../../src/cli/get/get.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { apiContext, call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";

/** A crash loop, a failing init container, a labelled pod in another namespace, a deleted pod and a refused file. */
async function scenario(dir: string) {
  const h = storeHarness(dir);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  h.runtime.behaviours.set("setup", { exitAfterMs: 500, exitCode: 2 });
  const web = { ...pod({ name: "web" }), labels: { app: "web", tier: "front" } };
  const api = { ...pod({ name: "api", namespace: "prod" }), labels: { app: "api" } };
  const crash = pod({ name: "crash", containers: [container("crash")] });
  const init = pod({ name: "init", init: [container("setup")] });
  const old = pod({ name: "old" });
  await h.kubelet.sync(desired(web, api, crash, init, old));
  await h.advance(30);
  await h.kubelet.sync(desired(web, api, crash, init));
  await h.advance(30);
  h.store.saveRefusedManifests(
    [{ file: "/manifests/bad.yaml", uid: "u-bad", namespace: "demo", name: "bad", reason: "Invalid", issues: [{ path: ["spec"], message: "required" }] }],
    [],
    refusedPodObject,
  );
  return h;
}

test("the pod list is a PodList of live pods with resourceVersions from the store; refused files and deleted pods are not pods", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const all = await call(podRoutes, "GET", "/api/v1/pods", api);
  expect(all.status).toBe(200);
  expect(all.body.kind).toBe("PodList");
  expect(all.body.items.map((p: any) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual(["demo/crash-lab", "demo/init-lab", "demo/web-lab", "prod/api-lab"]);
  expect(all.body.items.every((p: any) => p.kind === "Pod" && p.apiVersion === "v1")).toBe(true);
  expect(Number(all.body.metadata.resourceVersion)).toBe(api.store.revision());
  const revisions = all.body.items.map((p: any) => Number(p.metadata.resourceVersion));
  expect(Math.max(...revisions)).toBeLessThanOrEqual(api.store.revision());
  expect(revisions.every((r: number) => r > 0)).toBe(true);

  const demo = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods", api);
  expect(demo.body.items.map((p: any) => p.metadata.name)).toEqual(["crash-lab", "init-lab", "web-lab"]);
  // The deleted incarnation is still in the database, and the refused file in its table.
  expect(api.store.findPod("old-lab", "demo")?.deletedAt).toBeNumber();
  expect(api.store.refusedPods().map((r) => r.name)).toEqual(["bad"]);
  const nowhere = await call(podRoutes, "GET", "/api/v1/namespaces/nowhere/pods", api);
  expect(nowhere).toMatchObject({ status: 200, body: { kind: "PodList", items: [] } });
  h.agent.close();
});

test("get pod: the object, its /status, and kubectl's NotFound for a missing or deleted pod", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const web = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods/web-lab", api);
  expect(web.body).toMatchObject({ kind: "Pod", apiVersion: "v1", metadata: { name: "web-lab", labels: { app: "web" } }, status: { phase: "Running" } });
  expect((await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods/web-lab/status", api)).body.metadata.name).toBe("web-lab");
  for (const path of ["/api/v1/namespaces/demo/pods/nope", "/api/v1/namespaces/demo/pods/old-lab", "/api/v1/namespaces/prod/pods/web-lab", "/api/v1/namespaces/demo/pods/bad"]) {
    const missing = await call(podRoutes, "GET", path, api);
    const name = path.split("/").at(-1);
    expect(missing).toMatchObject({ status: 404, body: { kind: "Status", status: "Failure", reason: "NotFound", code: 404, message: `pods "${name}" not found` } });
  }
  h.agent.close();
});

test("the Table has the API server's pod columns and the same READY, STATUS, RESTARTS as minikubelet get pods -A", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const table = await call(podRoutes, "GET", "/api/v1/pods", api, { accept: TABLE_ACCEPT, query: { limit: "500" } });
  expect(table.contentType).toBe("application/json;as=Table;v=v1;g=meta.k8s.io");
  expect(table.body.kind).toBe("Table");
  expect(table.body.apiVersion).toBe("meta.k8s.io/v1");
  expect(table.body.columnDefinitions.map((c: any) => [c.name, c.priority])).toEqual([
    ["Name", 0],
    ["Ready", 0],
    ["Status", 0],
    ["Restarts", 0],
    ["Age", 0],
    ["IP", 1],
    ["Node", 1],
    ["Nominated Node", 1],
    ["Readiness Gates", 1],
  ]);
  // Metadata is the API server's default: kubectl needs kind, apiVersion and the namespace.
  expect(table.body.rows[0].object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "crash-lab", namespace: "demo" } });

  let out = "";
  await getCommand("pods", undefined, { db: h.dbPath, allNamespaces: true }, { clock: h.clock, stdout: (t) => (out += t), stderr: () => {} });
  const cli = new Map(
    out
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.split(/\s{3,}/))
      .map(([, name, ready, status, restarts]) => [name, [ready, status, restarts]]),
  );
  const cells = table.body.rows.map((row: any) => [row.cells[0], row.cells.slice(1, 4)]);
  expect(cells.map(([name]: [string]) => name)).toEqual(["crash-lab", "init-lab", "web-lab", "api-lab"]);
  for (const [name, columns] of cells) expect([name, columns]).toEqual([name, cli.get(name)]);
  // The scenario covers what it claims to: each loop shows its last exit while its back-off runs.
  expect(cli.get("crash-lab")![1]).toBe("Error");
  expect(cli.get("init-lab")![1]).toBe("Init:Error");
  expect(cli.get("web-lab")).toEqual(["1/1", "Running", "0"]);
  h.agent.close();
});

test("includeObject None, Object and v1beta1 Tables; a single pod is a one-row Table", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const none = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods", api, { accept: TABLE_ACCEPT, query: { includeObject: "None" } });
  expect(none.body.rows.every((row: any) => row.object === undefined)).toBe(true);
  const full = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods", api, { accept: TABLE_ACCEPT, query: { includeObject: "Object" } });
  expect(full.body.rows[0].object).toMatchObject({ kind: "Pod", apiVersion: "v1", spec: { containers: [{ name: "crash" }] } });
  const beta = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods", api, { accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io" });
  expect(beta.body.apiVersion).toBe("meta.k8s.io/v1beta1");
  const bad = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods", api, { accept: TABLE_ACCEPT, query: { includeObject: "All" } });
  expect(bad).toMatchObject({ status: 400, body: { reason: "BadRequest" } });
  const one = await call(podRoutes, "GET", "/api/v1/namespaces/demo/pods/web-lab", api, { accept: TABLE_ACCEPT });
  expect(one.body.rows.map((row: any) => row.cells.slice(0, 3))).toEqual([["web-lab", "1/1", "Running"]]);
  h.agent.close();
});

test("label and field selectors narrow the list; bad ones are 400s", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const names = async (query: Record<string, string>) => (await call(podRoutes, "GET", "/api/v1/pods", api, { query })).body.items.map((p: any) => p.metadata.name);
  expect(await names({ labelSelector: "app=web" })).toEqual(["web-lab"]);
  expect(await names({ labelSelector: "app in (web,api)" })).toEqual(["web-lab", "api-lab"]);
  expect(await names({ labelSelector: "app,app!=api" })).toEqual(["web-lab"]);
  expect(await names({ labelSelector: "!app" })).toEqual(["crash-lab", "init-lab"]);
  expect(await names({ fieldSelector: "metadata.name=crash-lab" })).toEqual(["crash-lab"]);
  expect(await names({ fieldSelector: "metadata.namespace==prod" })).toEqual(["api-lab"]);
  expect(await names({ fieldSelector: "status.phase!=Succeeded,spec.nodeName=lab,status.phase!=Failed" })).toHaveLength(4);
  expect(await names({ fieldSelector: "status.phase=Pending" })).toEqual(["init-lab"]);
  expect(await names({ fieldSelector: "spec.nodeName=elsewhere" })).toEqual([]);
  const badField = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { fieldSelector: "spec.foo=bar" } });
  expect(badField).toMatchObject({ status: 400, body: { reason: "BadRequest", message: "field label not supported: spec.foo" } });
  const badLabel = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { labelSelector: "app in web" } });
  expect(badLabel).toMatchObject({ status: 400, body: { message: "unable to parse requirement: found 'web', expected: '('" } });
  h.agent.close();
});

test("limit and continue page through the list; a bad token or a huge limit is a 400", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const first = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { limit: "3" } });
  expect(first.body.items.map((p: any) => p.metadata.name)).toEqual(["crash-lab", "init-lab", "web-lab"]);
  expect(first.body.metadata.remainingItemCount).toBe(1);
  const second = await call(podRoutes, "GET", "/api/v1/pods", api, { accept: TABLE_ACCEPT, query: { limit: "3", continue: first.body.metadata.continue } });
  expect(second.body.rows.map((row: any) => row.cells[0])).toEqual(["api-lab"]);
  expect(second.body.metadata.continue).toBeUndefined();
  const bad = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { continue: "not-a-token" } });
  expect(bad).toMatchObject({ status: 400, body: { reason: "BadRequest" } });
  expect(bad.body.message).toStartWith("invalid continue token: ");
  const huge = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { limit: "1000000" } });
  expect(huge).toMatchObject({ status: 400, body: { message: "limit: Invalid value: 1000000: must be at most 10000" } });
  const word = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { limit: "many" } });
  expect(word.status).toBe(400);
  h.agent.close();
});

test("writes are 405s naming the manifest file or directory", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const remove = await call(writeRefusalRoutes, "DELETE", "/api/v1/namespaces/demo/pods/web-lab", api);
  expect(remove).toMatchObject({
    status: 405,
    body: { reason: "MethodNotAllowed", code: 405, message: "pod web-lab comes from the manifest file /manifests/web.yaml: remove the file to delete it" },
  });
  const patch = await call(writeRefusalRoutes, "PATCH", "/api/v1/namespaces/demo/pods/web-lab", api);
  expect(patch.body.message).toBe("pod web-lab comes from the manifest file /manifests/web.yaml: edit the file to change it");
  const create = await call(writeRefusalRoutes, "POST", "/api/v1/namespaces/demo/pods", api);
  expect(create).toMatchObject({ status: 405, body: { message: "pods are created from manifest files or through the agent's API (minikubelet run), not through this server, which only reads the database: add a manifest file to /manifests" } });
  // kubectl apply -f web.yaml posts `web`: the agent runs it as web-lab, from that file.
  const apply = await call(writeRefusalRoutes, "POST", "/api/v1/namespaces/demo/pods", api, { body: JSON.stringify({ kind: "Pod", metadata: { name: "web" } }) });
  expect(apply).toMatchObject({ status: 405, body: { message: "pod web-lab comes from the manifest file /manifests/web.yaml: edit the file to change it" } });
  const elsewhere = await call(writeRefusalRoutes, "POST", "/api/v1/namespaces/demo/pods", api, { body: JSON.stringify({ metadata: { name: "web", namespace: "prod" } }) });
  expect(elsewhere.body.message).toStartWith("pods are created from manifest files or through the agent's API");
  const garbage = await call(writeRefusalRoutes, "POST", "/api/v1/namespaces/demo/pods", api, { body: "{not json" });
  expect(garbage.body.message).toStartWith("pods are created from manifest files or through the agent's API");
  const missing = await call(writeRefusalRoutes, "DELETE", "/api/v1/namespaces/demo/pods/nope", api);
  expect(missing).toMatchObject({ status: 404, body: { message: 'pods "nope" not found' } });
  h.agent.close();
});

test("resourceVersion on a list: 0 or the current one or older is served; a newer one is 504, a word is 400", async () => {
  using dir = tempDir();
  const h = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const current = api.store.revision();
  for (const resourceVersion of ["0", "1", String(current)]) {
    const list = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { resourceVersion } });
    expect(list.body.metadata.resourceVersion).toBe(String(current));
  }
  const ahead = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { resourceVersion: String(current + 5) } });
  expect(ahead).toMatchObject({ status: 504, body: { reason: "Timeout", message: `Too large resource version: ${current + 5}, current: ${current}`, details: { retryAfterSeconds: 1 } } });
  const word = await call(podRoutes, "GET", "/api/v1/pods", api, { query: { resourceVersion: "latest" } });
  expect(word).toMatchObject({ status: 400, body: { reason: "BadRequest" } });
  h.agent.close();
});
