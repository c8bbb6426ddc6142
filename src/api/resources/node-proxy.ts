/**
 * `/api/v1/nodes/NODE/proxy/...` (and `NODE:10250`, `https:NODE:10250`), as the API server proxies
 * to a node's kubelet: `kubectl get --raw /api/v1/nodes/NODE/proxy/stats/summary` reaches the
 * kubelet's own endpoints. Another node is 404 NotFound; a node whose kubelet serves nothing
 * (`--kubelet-listen off`, or `serve`) is 503, as a kubelet the API server cannot reach.
 */
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { ApiError } from "../http/status.ts";

/** Path depths served under `proxy/` (`containerLogs/NS/POD/CONTAINER` is the deepest the kubelet has). */
const MAX_DEPTH = 6;

async function proxy(request: ApiRequest, api: ApiContext): Promise<Response> {
  const node = nodeOf(request.params.name!);
  if (node.name !== api.nodeName) throw ApiError.notFound("nodes", node.name);
  const kubelet = api.kubelet?.();
  if (!kubelet || (node.port !== undefined && node.port !== kubelet.port)) {
    const port = node.port ?? kubelet?.port ?? 10250;
    throw new ApiError(503, "ServiceUnavailable", `error trying to reach service: dial tcp 127.0.0.1:${port}: connect: connection refused`);
  }
  const rest = Array.from({ length: MAX_DEPTH }, (_, index) => request.params[`p${index}`]).filter((segment) => segment !== undefined);
  return kubelet.proxy(`/${rest.map(encodeURIComponent).join("/")}`, request);
}

/** `NODE`, `NODE:PORT` or `SCHEME:NODE:PORT`, as the API server's node proxy parses its name. */
function nodeOf(name: string): { name: string; port?: number } {
  const parts = name.split(":");
  if (parts.length === 3) return { name: parts[1]!, port: Number(parts[2]) };
  if (parts.length === 2) return { name: parts[0]!, port: Number(parts[1]) };
  return { name };
}

export const nodeProxyRoutes: Route[] = Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => ({
  method: "GET" as const,
  path: ["/api/v1/nodes/:name/proxy", ...Array.from({ length: depth }, (_, index) => `:p${index}`)].join("/"),
  handle: proxy,
}));
