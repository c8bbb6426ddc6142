/**
 * The kubelet's own endpoints over the real listener (TLS, the API's token) on a loop driven by the
 * fake runtime and fake clock, with its database: health, the pods served and running, configz,
 * container logs with the kubelet's options, metrics, the stats provider's two endpoints (a fake
 * here), and the same endpoints through the API's node proxy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAgentKubeletServer } from "../../src/agent/kubelet-server.ts";
import { startApi, type RunningApi } from "../../src/api/start.ts";
import { apiDirOf, loadCredentials } from "../../src/api/http/tls.ts";
import { NOTHING_RESERVED } from "../../src/eviction/node-allocatable.ts";
import { parseEvictionHard } from "../../src/eviction/thresholds.ts";
import { DEFAULT_LOG_POLICY } from "../../src/runtime/log-rotation-policy.ts";
import { kubeletConfigz } from "../../src/server/configz.ts";
import { KubeletMetrics } from "../../src/server/metrics.ts";
import { startKubeletServer, type RunningKubeletServer } from "../../src/server/start.ts";
import { sample } from "../metrics-text.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const dir = tempDir("minikubelet-kubelet-server-");
const logDir = join(dir.path, "logs");
mkdirSync(logDir);
const h = storeHarness(dir.path, { logPathOf: (_uid, id) => join(logDir, id) });
const start = h.runtime.startContainer.bind(h.runtime);
h.runtime.startContainer = async (config) => {
  const id = await start(config);
  writeFileSync(join(logDir, id), `${config.container.name} line 1 of attempt ${config.attempt}\n${config.container.name} line 2 of attempt ${config.attempt}\n`);
  return id;
};
const summary = { node: { nodeName: "lab" }, pods: [] };
let lastIteration = h.clock.now();
let server: RunningKubeletServer;
let api: RunningApi;
let token: string;

beforeAll(async () => {
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web", { image: "nginx:1.27" })] }), pod({ name: "crash" })));
  // Crash has run twice and waits out its back-off: web alone runs.
  await h.advance(2.5);
  server = startKubeletServer(deps());
  api = startApi({ dbPath: h.dbPath, listen: { hostname: "127.0.0.1", port: 0 }, nodeName: "lab", commits: { subscribe: () => () => {} }, clock: h.clock, kubelet: () => server });
  token = loadCredentials(apiDirOf(h.dbPath)).token;
});

function deps(listen = { hostname: "127.0.0.1", port: 0 }) {
  return {
    dbPath: h.dbPath,
    nodeName: "lab",
    commits: { subscribe: () => () => {} },
    runtime: h.runtime,
    clock: h.clock,
    servedPods: () => h.kubelet.servedPods(),
    metrics: new KubeletMetrics({ pods: () => h.kubelet.pods.values() }),
    stats: { summary: async () => summary, resourceMetrics: async () => "# HELP node_cpu_usage_seconds_total x\nnode_cpu_usage_seconds_total 1.5\n" },
    configz: kubeletConfigz({
      staticPodPath: "/etc/manifests",
      fileCheckFrequencyMs: 20_000,
      maxContainerRestartPeriodMs: 300_000,
      logPolicy: DEFAULT_LOG_POLICY,
      podPidsLimit: 64,
      reservations: { evictionHard: parseEvictionHard(""), systemReserved: { ...NOTHING_RESERVED, cpuMillis: 500n }, kubeReserved: NOTHING_RESERVED },
      maxPods: 110,
      listen: { hostname: "127.0.0.1", port: 10250 },
    }),
    syncLoop: { lastIteration: () => lastIteration, thresholdMs: 300_000 },
    listen,
  };
}

afterAll(async () => {
  await server?.stop();
  await api?.stop();
  h.agent.close();
  dir[Symbol.dispose]();
});

function get(path: string, auth: string | null = `Bearer ${token}`, base = server.url): Promise<Response> {
  return fetch(`${base}${path}`, { headers: auth ? { Authorization: auth } : {}, tls: { ca: loadCredentials(apiDirOf(h.dbPath)).caPem } });
}

describe("authentication", () => {
  test.each([
    ["no token", null],
    ["a wrong token", "Bearer not-the-token"],
  ])("%s is 401, on every endpoint", async (_case, auth) => {
    for (const path of ["/healthz", "/pods", "/metrics", "/stats/summary", "/containerLogs/demo/web-lab/web"]) {
      const response = await get(path, auth);
      expect([path, response.status, response.headers.get("www-authenticate")]).toEqual([path, 401, 'Bearer realm="minikubelet"']);
    }
  });
});

test("the API's /healthz and /version answer without a token (system:public-info-viewer); the kubelet's endpoints and the node proxy do not", async () => {
  for (const path of ["/healthz", "/version", "/livez", "/readyz"]) expect([path, (await get(path, null, api.url)).status]).toEqual([path, 200]);
  expect((await get("/api/v1/nodes/lab/proxy/healthz", null, api.url)).status).toBe(401);
  expect((await get("/healthz", null)).status).toBe(401);
});

test("/healthz and its checks are ok while the loop goes round; syncloop fails once it has been quiet past the threshold", async () => {
  for (const path of ["/healthz", "/healthz/ping", "/healthz/log", "/healthz/syncloop"]) {
    const response = await get(path);
    expect([path, response.status, await response.text()]).toEqual([path, 200, "ok"]);
  }
  lastIteration = h.clock.now() - 300_001;
  try {
    const loop = await get("/healthz/syncloop");
    expect([loop.status, await loop.text()]).toEqual([500, "internal server error: sync Loop took longer than expected\n"]);
    const all = await get("/healthz");
    expect([all.status, await all.text()]).toEqual([500, "[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n"]);
    expect((await get("/healthz/ping")).status).toBe(200);
  } finally {
    lastIteration = h.clock.now();
  }
});

test("/pods is the served pods as a v1 PodList", async () => {
  const list = (await (await get("/pods")).json()) as { kind: string; apiVersion: string; items: { metadata: { name: string }; status: { phase: string } }[] };
  expect([list.kind, list.apiVersion]).toEqual(["PodList", "v1"]);
  expect(list.items).toEqual(h.kubelet.servedPods() as never);
  expect(list.items.map((item) => item.metadata.name).sort()).toEqual(["crash-lab", "web-lab"]);
});

test("/runningpods/ is the runtime's pods with a running container: names, uids and the running containers only", async () => {
  const list = (await (await get("/runningpods/")).json()) as { kind: string; items: unknown[] };
  const running = [...h.runtime.containers.values()].filter((c) => c.state === "running").map((c) => c.config.container.name);
  expect(running).toEqual(["web"]);
  expect(list.kind).toBe("PodList");
  expect(list.items).toEqual([
    { metadata: { name: "web-lab", namespace: "demo", uid: "uid-web-1", creationTimestamp: null }, spec: { containers: [{ name: "web", image: "nginx:1.27", resources: {} }] }, status: {} },
  ]);
});

test("/configz is the agent's settings under kubeletconfig, in KubeletConfiguration's names and syntax", async () => {
  const body = (await (await get("/configz")).json()) as { kubeletconfig: Record<string, unknown> };
  expect(body.kubeletconfig).toMatchObject({
    staticPodPath: "/etc/manifests",
    fileCheckFrequency: "20s",
    port: 10250,
    maxPods: 110,
    podPidsLimit: 64,
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
    systemReserved: { cpu: "500m" },
    kubeReserved: {},
    containerLogMaxSize: "10Mi",
    containerLogMaxFiles: 5,
    crashLoopBackOff: { maxContainerRestartPeriod: "5m0s" },
  });
});

test("/containerLogs/NS/POD/CONTAINER reads a container's log with the kubelet's options", async () => {
  const current = await get("/containerLogs/demo/crash-lab/crash");
  expect([current.status, await current.text()]).toEqual([200, "crash line 1 of attempt 1\ncrash line 2 of attempt 1\n"]);
  // The same read as pods/log, options and all.
  for (const query of ["?previous=true&tailLines=1", "?tailLines=1&limitBytes=10", "?sinceSeconds=1"]) {
    const kubelet = await (await get(`/containerLogs/demo/crash-lab/crash${query}`)).text();
    const podLog = await (await get(`/api/v1/namespaces/demo/pods/crash-lab/log${query}`, `Bearer ${token}`, api.url)).text();
    expect([query, kubelet]).toEqual([query, podLog]);
  }
  expect(await (await get("/containerLogs/demo/crash-lab/crash?tailLines=1")).text()).toBe("crash line 2 of attempt 1\n");
  const stamped = await (await get("/containerLogs/demo/crash-lab/crash?timestamps=true&tailLines=1")).text();
  expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\S+Z crash line 2 of attempt 1\n$/);
  const unknown = await get("/containerLogs/demo/crash-lab/nope");
  expect(unknown.status).toBe(400);
  expect(((await unknown.json()) as { message: string }).message).toBe("container nope is not valid for pod crash-lab");
  expect((await get("/containerLogs/demo/gone/crash")).status).toBe(404);
});

test("/metrics is Prometheus text with the kubelet's names, the running gauges read from the loop; requests are counted", async () => {
  const response = await get("/metrics");
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await response.text();
  expect(text).toContain("# HELP kubelet_running_pods [ALPHA] Number of pods that have a running pod sandbox\n# TYPE kubelet_running_pods gauge\n");
  expect(sample(text, "kubelet_running_pods")).toBe(2);
  expect(sample(text, 'kubelet_running_containers{container_state="running"}')).toBe(1);
  // The crash whose exit is shown, and the one kept before it for logs --previous.
  expect(sample(text, 'kubelet_running_containers{container_state="exited"}')).toBe(2);
  await get("/pods");
  const after = await (await get("/metrics")).text();
  const pods = sample(after, 'kubelet_http_requests_total{method="get",path="pods",server_type="readwrite",long_running="false"}');
  expect(pods).toBeGreaterThan(0);
  expect(sample(after, 'kubelet_http_requests_duration_seconds_count{method="get",path="pods",server_type="readwrite",long_running="false"}')).toBe(pods);
  expect(await (await get("/metrics/probes")).text()).toContain("# TYPE prober_probe_total counter");
});

test("/stats/summary and /metrics/resource are the stats provider's", async () => {
  expect(await (await get("/stats/summary")).json()).toEqual(summary);
  expect(sample(await (await get("/metrics/resource")).text(), "node_cpu_usage_seconds_total")).toBe(1.5);
});

describe("through the API's node proxy", () => {
  test("/api/v1/nodes/NODE/proxy/... and NODE:PORT reach the kubelet's endpoints", async () => {
    const metrics = await get("/api/v1/nodes/lab/proxy/metrics", `Bearer ${token}`, api.url);
    expect(metrics.status).toBe(200);
    expect(sample(await metrics.text(), "kubelet_running_pods")).toBe(2);
    expect(await (await get("/api/v1/nodes/lab/proxy/stats/summary", `Bearer ${token}`, api.url)).json()).toEqual(summary);
    expect(await (await get(`/api/v1/nodes/lab:${server.port}/proxy/containerLogs/demo/crash-lab/crash?tailLines=1`, `Bearer ${token}`, api.url)).text()).toBe("crash line 2 of attempt 1\n");
  });

  test("another node is 404 NotFound; the Node reports the kubelet's port", async () => {
    const other = await get("/api/v1/nodes/elsewhere/proxy/metrics", `Bearer ${token}`, api.url);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: 'nodes "elsewhere" not found', details: { name: "elsewhere", kind: "nodes" } });
    const node = (await (await get("/api/v1/nodes/lab", `Bearer ${token}`, api.url)).json()) as { status: { daemonEndpoints: { kubeletEndpoint: { Port: number } } } };
    expect(node.status.daemonEndpoints.kubeletEndpoint.Port).toBe(server.port);
  });

  test("without a token the proxy is the API's 401", async () => {
    expect((await get("/api/v1/nodes/lab/proxy/metrics", null, api.url)).status).toBe(401);
  });
});

test("a busy port is one line to say, and no server: the agent goes on without its endpoints", () => {
  const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    expect(startAgentKubeletServer(deps({ hostname: "127.0.0.1", port: busy.port }))).toEqual({ failure: `cannot listen on 127.0.0.1:${busy.port}: the address is already in use` });
    expect(startAgentKubeletServer({ ...deps(), listen: undefined })).toBeUndefined();
  } finally {
    busy.stop(true);
  }
});

test("the node proxy of an agent serving no kubelet endpoints (or dialled on another port) is 503, as an unreachable kubelet", async () => {
  const offline = startApi({ dbPath: h.dbPath, listen: { hostname: "127.0.0.1", port: 0 }, nodeName: "lab", commits: { subscribe: () => () => {} }, clock: h.clock, kubelet: () => undefined });
  try {
    const response = await get("/api/v1/nodes/lab/proxy/metrics", `Bearer ${token}`, offline.url);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ reason: "ServiceUnavailable", message: "error trying to reach service: dial tcp 127.0.0.1:10250: connect: connection refused" });
  } finally {
    await offline.stop();
  }
  const wrongPort = await get(`/api/v1/nodes/lab:${server.port + 1}/proxy/metrics`, `Bearer ${token}`, api.url);
  expect(wrongPort.status).toBe(503);
});
