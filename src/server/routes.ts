/**
 * The kubelet's own endpoints (pkg/kubelet/server/server.go), as routes of the same server the API
 * uses (token, TLS, bounds): health, the pods it serves and the ones its runtime runs, its
 * configuration, its container logs, exec, attach and port-forward (the API's streaming machinery,
 * by namespace and pod from the path), its metrics, and the stats provider's two endpoints. Every
 * handler reads what the loop already holds or asks the runtime; none waits on the loop.
 */
import type { ApiContext } from "../api/http/context.ts";
import type { ApiRequest, Route } from "../api/http/http.ts";
import { servePodLog } from "../api/resources/pods/logs-api.ts";
import { servePortForward } from "../api/portforward/portforward-api.ts";
import { serveAttach } from "../api/streaming/attach-api.ts";
import { serveExec } from "../api/streaming/exec-api.ts";
import { KUBELET_STREAM_PARAMS, parseExecOptions, parseStreamOptions } from "../api/streaming/exec-protocol.ts";
import { ApiError } from "../api/http/status.ts";
import type { Clock } from "../clock.ts";
import { LABEL } from "../runtime/labels.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { V1Pod } from "../v1/v1.ts";
import type { KubeletMetrics } from "./metrics.ts";
import type { StatsSource } from "../stats/stats-source.ts";

/** The kubelet's syncLoopHealthCheck floor: a loop quiet for longer than this is unhealthy. */
export const SYNC_LOOP_MIN_THRESHOLD_MS = 5 * 60_000;

export interface KubeletServerDeps {
  clock: Clock;
  /** The pods the loop serves, as last synced. */
  servedPods(): V1Pod[];
  runtime: Pick<Runtime, "listContainers">;
  metrics: KubeletMetrics;
  /** Absent until the stats provider is wired: those two endpoints answer 503. */
  stats?: StatsSource;
  configz: { kubeletconfig: Record<string, unknown> };
  /** When the sync loop last went round, and how long it may stay quiet (the kubelet's: twice its resync, at least 5 minutes). */
  syncLoop: { lastIteration(): number; thresholdMs: number };
}

const TEXT = { "Content-Type": "text/plain; charset=utf-8" };
const JSON_TYPE = { "Content-Type": "application/json" };
const PROMETHEUS = { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" };

type Handler = (request: ApiRequest, api: ApiContext) => Response | Promise<Response>;

export function kubeletRoutes(deps: KubeletServerDeps): Route[] {
  const checks: Record<string, () => string | undefined> = {
    ping: () => undefined,
    log: () => undefined,
    syncloop: () => (deps.clock.now() - deps.syncLoop.lastIteration() > deps.syncLoop.thresholdMs ? "sync Loop took longer than expected" : undefined),
  };
  const routes: [string, Handler][] = [
    ["/healthz", () => healthz(checks)],
    ...Object.keys(checks).map((name): [string, Handler] => [`/healthz/${name}`, () => oneCheck(checks[name]!)]),
    ["/pods", () => podList(deps.servedPods())],
    ["/runningpods", async () => podList(await runningPods(deps))],
    ["/configz", () => new Response(JSON.stringify(deps.configz), { headers: JSON_TYPE })],
    ["/metrics", async () => new Response(await deps.metrics.registry.metrics(), { headers: PROMETHEUS })],
    ["/metrics/probes", async () => new Response(await deps.metrics.probes.metrics(), { headers: PROMETHEUS })],
    ["/metrics/resource", async () => new Response(await stats(deps).resourceMetrics(), { headers: PROMETHEUS })],
    ["/stats/summary", async () => new Response(JSON.stringify(await stats(deps).summary()), { headers: JSON_TYPE })],
    ["/containerLogs/:namespace/:pod/:container", (request, api) => servePodLog(request, api, request.params.namespace!, request.params.pod!, request.params.container!)],
  ];
  // The streams the API server proxies pods/exec, attach and portforward to: a GET for a WebSocket,
  // a POST for SPDY (what the API server sends a node that does not declare ExtendWebSocketsToKubelet).
  const streams: [string, Handler][] = [
    ["/exec/:namespace/:pod/:container", (request, api) => serveExec(request, api, request.params.namespace!, request.params.pod!, { ...parseExecOptions(request.query, KUBELET_STREAM_PARAMS), container: request.params.container! })],
    ["/attach/:namespace/:pod/:container", (request, api) => serveAttach(request, api, request.params.namespace!, request.params.pod!, { ...parseStreamOptions(request.query, KUBELET_STREAM_PARAMS), container: request.params.container! })],
    ["/portForward/:namespace/:pod", (request, api) => servePortForward(request, api, request.params.namespace!, request.params.pod!)],
  ];
  return [
    ...routes.map(([path, handle]): Route => ({ method: "GET", path, handle: timed(deps.metrics, path, handle) })),
    ...streams.flatMap(([path, handle]): Route[] => (["GET", "POST"] as const).map((method) => ({ method, path, handle: timed(deps.metrics, path, handle) }))),
  ];
}

/** Each request counted and timed under the kubelet's path bucket (`metrics/probes`, `containerLogs`, ...). */
function timed(metrics: KubeletMetrics, path: string, handle: Handler): Handler {
  const bucket = path.split("/").filter((segment) => segment && !segment.startsWith(":")).slice(0, path.startsWith("/metrics/") ? 2 : 1).join("/");
  return async (request, api) => {
    const started = api.clock.now();
    try {
      return await handle(request, api);
    } finally {
      const longRunning = request.query.get("follow") === "true" ? "true" : "false";
      metrics.httpRequest({ method: request.method.toLowerCase(), path: bucket, long_running: longRunning }, (api.clock.now() - started) / 1000);
    }
  };
}

/** All checks: `ok`, or the failing ones marked and the reason withheld, as the kubelet's healthz prints them. */
function healthz(checks: Record<string, () => string | undefined>): Response {
  const failed = Object.entries(checks).filter(([, check]) => check() !== undefined);
  if (failed.length === 0) return new Response("ok", { headers: TEXT });
  const lines = Object.entries(checks).map(([name, check]) => (check() === undefined ? `[+]${name} ok` : `[-]${name} failed: reason withheld`));
  return new Response(`${lines.join("\n")}\nhealthz check failed\n`, { status: 500, headers: TEXT });
}

function oneCheck(check: () => string | undefined): Response {
  const failure = check();
  if (failure === undefined) return new Response("ok", { headers: TEXT });
  return new Response(`internal server error: ${failure}\n`, { status: 500, headers: TEXT });
}

function podList(items: unknown[]): Response {
  return new Response(JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: {}, items }), { headers: JSON_TYPE });
}

function stats(deps: KubeletServerDeps): StatsSource {
  if (!deps.stats) throw new ApiError(503, "ServiceUnavailable", "the stats provider is not running");
  return deps.stats;
}

/**
 * The runtime's pods with a running container, as the kubelet's runtime cache gives them: a pod's
 * name, namespace and uid, and its running containers' names and images, nothing else.
 */
async function runningPods(deps: KubeletServerDeps): Promise<unknown[]> {
  const images = new Map<string, string>();
  for (const pod of deps.servedPods()) {
    for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) images.set(`${pod.metadata.uid}/${container.name}`, container.image ?? "");
  }
  const pods = new Map<string, { metadata: Record<string, unknown>; spec: { containers: unknown[] }; status: object }>();
  for (const container of await deps.runtime.listContainers()) {
    const labels = container.labels;
    if (container.state !== "running" || labels[LABEL.sandbox] === "true") continue;
    const uid = labels[LABEL.podUid] ?? "";
    let pod = pods.get(uid);
    if (!pod) {
      pod = { metadata: { name: labels[LABEL.podName], namespace: labels[LABEL.podNamespace], uid, creationTimestamp: null }, spec: { containers: [] }, status: {} };
      pods.set(uid, pod);
    }
    const name = labels[LABEL.containerName] ?? "";
    pod.spec.containers.push({ name, image: images.get(`${uid}/${name}`) ?? "", resources: {} });
  }
  return [...pods.values()];
}
