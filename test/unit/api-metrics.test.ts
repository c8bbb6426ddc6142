/**
 * metrics.k8s.io/v1beta1 as metrics-server serves it: NodeMetrics and PodMetrics from the stats
 * collector's windows (quantities in nanocores and bytes), Running pods only, namespaces, label and
 * field selectors, NotFound for a pod or node without figures, the Table form, and discovery.
 */
import { expect, test } from "bun:test";
import { discoveryRoutes } from "../../src/api/discovery/discovery.ts";
import { metricsRoutes } from "../../src/api/resources/metrics-api.ts";
import type { ContainerUsageWindow, MetricsSource } from "../../src/stats/stats-source.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { apiContext, call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";

async function scenario(dir: string) {
  const h = storeHarness(dir);
  h.runtime.behaviours.set("done", { exitAfterMs: 100, exitCode: 0 });
  const web = { ...pod({ name: "web", containers: [container("app"), container("proxy")] }), labels: { app: "web" } };
  const api = { ...pod({ name: "api", namespace: "prod" }), labels: { app: "api" } };
  const fresh = pod({ name: "fresh" });
  const job = { ...pod({ name: "job", containers: [container("done")] }), restartPolicy: "Never" as const };
  await h.kubelet.sync(desired(web, api, fresh, job));
  await h.advance(5);
  return { h, uids: { web: web.uid, api: api.uid, job: job.uid } };
}

test("pods: each Running pod with windows, its containers' cpu in nanocores and working set in bytes", async () => {
  using dir = tempDir();
  const { h, uids } = await scenario(dir.path);
  const at = h.clock.now();
  const windows = new Map<string, ContainerUsageWindow[]>([
    [uids.web, [{ name: "app", timestamp: at, windowMs: 10_000, cpuNanoCores: 998_123_456, memoryBytes: 5 * 1024 * 1024 }, { name: "proxy", timestamp: at - 1000, windowMs: 9_500, cpuNanoCores: 1_000_000, memoryBytes: 1_234_567 }]],
    [uids.api, [{ name: "web", timestamp: at, windowMs: 10_000, cpuNanoCores: 0, memoryBytes: 4096 }]],
    // A completed pod is not Running: not listed even with figures.
    [uids.job, [{ name: "done", timestamp: at, windowMs: 10_000, cpuNanoCores: 5, memoryBytes: 5 }]],
  ]);
  const metrics: MetricsSource = { nodeUsage: () => undefined, podUsage: (uid) => windows.get(uid) };
  using api = { ...apiContext(h.dbPath, h.clock), metrics };

  const all = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/pods", api);
  expect(all.status).toBe(200);
  expect(all.body).toMatchObject({ kind: "PodMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {} });
  expect(all.body.items.map((item: any) => `${item.metadata.namespace}/${item.metadata.name}`)).toEqual(["demo/web-lab", "prod/api-lab"]);
  expect(all.body.items[0]).toEqual({
    kind: "PodMetrics",
    apiVersion: "metrics.k8s.io/v1beta1",
    metadata: { name: "web-lab", namespace: "demo", creationTimestamp: new Date(Math.floor(at / 1000) * 1000).toISOString().replace(".000Z", "Z"), labels: { app: "web" } },
    // The earliest container's time and window.
    timestamp: new Date(Math.floor((at - 1000) / 1000) * 1000).toISOString().replace(".000Z", "Z"),
    window: "9.5s",
    containers: [
      { name: "app", usage: { cpu: "998123456n", memory: "5Mi" } },
      { name: "proxy", usage: { cpu: "1m", memory: "1234567" } },
    ],
  });

  const demo = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods", api);
  expect(demo.body.items.map((item: any) => item.metadata.name)).toEqual(["web-lab"]);
  const labelled = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/pods", api, { query: { labelSelector: "app=api" } });
  expect(labelled.body.items.map((item: any) => item.metadata.name)).toEqual(["api-lab"]);
  const named = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/pods", api, { query: { fieldSelector: "metadata.name=web-lab" } });
  expect(named.body.items.map((item: any) => item.metadata.name)).toEqual(["web-lab"]);
  const bad = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/pods", api, { query: { labelSelector: "app in (" } });
  expect(bad.status).toBe(400);

  const one = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/prod/pods/api-lab", api);
  expect(one.body).toMatchObject({ kind: "PodMetrics", metadata: { name: "api-lab", namespace: "prod" }, window: "10s", containers: [{ name: "web", usage: { cpu: "0", memory: "4Ki" } }] });
  const missing = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods/nope", api);
  expect(missing.status).toBe(404);
  expect(missing.body.message).toBe('pods "nope" not found');
  // The pod exists but has no window yet: NotFound on the metrics resource, as metrics-server says it.
  const early = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods/fresh-lab", api);
  expect(early.status).toBe(404);
  expect(early.body).toMatchObject({ reason: "NotFound", message: 'pods.metrics.k8s.io "demo/fresh-lab" not found', details: { group: "metrics.k8s.io", kind: "pods" } });

  // The Table form, as metrics-server draws it: a pod's row sums its containers.
  const table = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods", api, { accept: TABLE_ACCEPT });
  expect(table.body.columnDefinitions.map((c: any) => `${c.name}:${c.format}`)).toEqual(["Name:name", "cpu:quantity", "memory:quantity", "Window:duration"]);
  expect(table.body.rows.map((row: any) => row.cells)).toEqual([["web-lab", "999123456n", "6477447", "9.5s"]]);
});

test("nodes: the node's window, NotFound before two readings, another node's name NotFound", async () => {
  using dir = tempDir();
  const { h } = await scenario(dir.path);
  let node: ReturnType<MetricsSource["nodeUsage"]>;
  const metrics: MetricsSource = { nodeUsage: () => node, podUsage: () => undefined };
  using api = { ...apiContext(h.dbPath, h.clock), metrics };
  expect((await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", api)).body).toEqual({ kind: "NodeMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items: [] });
  const early = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/lab", api);
  expect(early.body).toMatchObject({ code: 404, message: 'nodes.metrics.k8s.io "lab" not found' });
  node = { timestamp: h.clock.now(), windowMs: 10_250, cpuNanoCores: 1_250_000_000, memoryBytes: 3 * 1024 ** 3 };
  const list = await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", api);
  expect(list.body.items).toHaveLength(1);
  expect(list.body.items[0]).toMatchObject({ kind: "NodeMetrics", metadata: { name: "lab", labels: expect.objectContaining({ "kubernetes.io/hostname": "lab" }) }, window: "10.25s", usage: { cpu: "1250m", memory: "3Gi" } });
  expect((await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/lab", api)).body.usage).toEqual({ cpu: "1250m", memory: "3Gi" });
  expect((await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", api, { query: { labelSelector: "kubernetes.io/hostname=other" } })).body.items).toEqual([]);
  expect((await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/other", api)).body.message).toBe('nodes "other" not found');
  // Without a collector (serve): empty lists, never an error kubectl would print on every command.
  using served = apiContext(h.dbPath, h.clock);
  expect((await call(metricsRoutes, "GET", "/apis/metrics.k8s.io/v1beta1/pods", served)).body.items).toEqual([]);
});

test("discovery lists metrics.k8s.io/v1beta1 with nodes and pods, in both forms", async () => {
  using dir = tempDir();
  const { h } = await scenario(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const aggregated = await call(discoveryRoutes, "GET", "/apis", api, { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json" });
  const group = aggregated.body.items.find((item: any) => item.metadata.name === "metrics.k8s.io");
  expect(group.versions).toEqual([
    {
      version: "v1beta1",
      freshness: "Current",
      resources: [
        { resource: "nodes", singularResource: "", responseKind: { group: "metrics.k8s.io", version: "v1beta1", kind: "NodeMetrics" }, scope: "Cluster", verbs: ["get", "list"], subresources: [] },
        { resource: "pods", singularResource: "", responseKind: { group: "metrics.k8s.io", version: "v1beta1", kind: "PodMetrics" }, scope: "Namespaced", verbs: ["get", "list"], subresources: [] },
      ],
    },
  ]);
  const legacy = await call(discoveryRoutes, "GET", "/apis/metrics.k8s.io/v1beta1", api, { accept: "application/json" });
  expect(legacy.body).toEqual({
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: "metrics.k8s.io/v1beta1",
    resources: [
      { name: "nodes", singularName: "", namespaced: false, kind: "NodeMetrics", verbs: ["get", "list"] },
      { name: "pods", singularName: "", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] },
    ],
  });
});
