import { expect, test } from "bun:test";
import { namespaceRoutes } from "../../src/api/namespaces-api.ts";
import { desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { apiContext, call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";

test("namespaces are default, kube-node-lease and those holding a live pod; another is NotFound", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", namespace: "prod" })));
  using api = apiContext(h.dbPath, h.clock);
  const list = await call(namespaceRoutes, "GET", "/api/v1/namespaces", api);
  expect(list.body.kind).toBe("NamespaceList");
  expect(list.body.items.map((n: any) => n.metadata.name)).toEqual(["default", "kube-node-lease", "prod"]);
  const prod = await call(namespaceRoutes, "GET", "/api/v1/namespaces/prod", api);
  expect(prod.body).toMatchObject({ kind: "Namespace", metadata: { name: "prod" }, status: { phase: "Active" } });
  const table = await call(namespaceRoutes, "GET", "/api/v1/namespaces", api, { accept: TABLE_ACCEPT });
  expect(table.body.rows.map((row: any) => row.cells.slice(0, 2))).toEqual([
    ["default", "Active"],
    ["kube-node-lease", "Active"],
    ["prod", "Active"],
  ]);
  const missing = await call(namespaceRoutes, "GET", "/api/v1/namespaces/nowhere", api);
  expect(missing).toMatchObject({ status: 404, body: { reason: "NotFound", message: 'namespaces "nowhere" not found' } });
  h.agent.close();
});
