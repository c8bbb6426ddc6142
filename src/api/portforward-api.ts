/**
 * `pods/NAME/portforward`: kubectl port-forward, served by the agent's runtime. kubectl 1.27 to
 * 1.30 POST a SPDY/3.1 upgrade (`portforward.k8s.io`); 1.31+ GET a WebSocket carrying SPDY
 * (`SPDY/3.1+portforward.k8s.io`, spdy-tunnel.ts) and fall back to the POST when that is refused.
 * Either way the session is the same (portforward-session.ts). Checks are made before the upgrade,
 * so a missing pod or one without a sandbox is a plain Status kubectl prints; the pod's sandbox is
 * found once, and each forwarded connection asks the runtime where to dial its port.
 */
import type { ApiContext } from "./context.ts";
import type { ApiRequest, Route } from "./http.ts";
import { PORT_FORWARD_PROTOCOL, PortForwardSession } from "./portforward-session.ts";
import { SPDY_TUNNEL_PREFIX, SpdyOverWebSocket } from "./spdy-tunnel.ts";
import { ApiError } from "./status.ts";
import { offersProtocol, requireRuntime, takeSessionSlot, upgradeSpdy } from "./streaming.ts";
import type { Runtime, Sandbox } from "../runtime/runtime.ts";
import type { V1Pod } from "../status/v1.ts";

const PORT_FORWARD_PATH = "/api/v1/namespaces/:namespace/pods/:name/portforward";

/** The WebSocket subprotocol of kubectl 1.31+: SPDY tunnelled. */
export const TUNNELED_PORT_FORWARD_PROTOCOL = SPDY_TUNNEL_PREFIX + PORT_FORWARD_PROTOCOL;

export const portForwardRoutes: Route[] = [
  { method: "GET", path: PORT_FORWARD_PATH, handle: handlePortForward },
  { method: "POST", path: PORT_FORWARD_PATH, handle: handlePortForward },
];

async function handlePortForward(request: ApiRequest, api: ApiContext): Promise<Response> {
  const { namespace = "", name = "" } = request.params;
  const pod = api.store.livePods({ namespace, name })[0]?.object;
  if (!pod) throw ApiError.notFound("pods", name);
  const runtime = requireRuntime(api, "port-forward");
  const upgrade = (request.headers.get("upgrade") ?? "").toLowerCase();
  if (upgrade !== "websocket" && upgrade !== "spdy/3.1") {
    throw ApiError.badRequest(`port-forward needs a connection upgrade: to websocket (${TUNNELED_PORT_FORWARD_PROTOCOL}) or SPDY/3.1 (${PORT_FORWARD_PROTOCOL})`);
  }
  const spdy = upgrade === "spdy/3.1";
  const offer = request.headers.get(spdy ? "x-stream-protocol-version" : "sec-websocket-protocol");
  const supported = spdy ? PORT_FORWARD_PROTOCOL : TUNNELED_PORT_FORWARD_PROTOCOL;
  if (!offersProtocol(offer, supported)) throw ApiError.badRequest(`requested protocol(s) are not supported: ${offer ?? "none"}; supports ${supported}`);
  const sandbox = await podSandbox(runtime, pod);
  const release = takeSessionSlot(api, "port-forward", api.limits.maxPortForwardSessions);
  if (release instanceof Response) return release;
  const session = new PortForwardSession({
    address: (port) => runtime.portForwardAddress(sandbox, port),
    sandboxId: sandbox.id,
    clock: api.clock,
    onEnd: release,
  });
  const refused = spdy ? upgradeSpdy(request, session) : request.upgrade(new SpdyOverWebSocket(session, api.clock));
  if (refused) {
    release();
    return refused;
  }
  return new Response(null, { status: 101 });
}

/** The pod's running sandbox, as the kubelet's GetPortForward finds it (by the pod's uid), in its words when there is none. */
async function podSandbox(runtime: Pick<Runtime, "listPodSandboxes">, pod: V1Pod): Promise<Sandbox> {
  const uid = pod.metadata?.uid ?? "";
  const sandbox = (await runtime.listPodSandboxes()).find((candidate) => candidate.podUid === uid && candidate.ready);
  if (!sandbox) throw new ApiError(500, "InternalError", `failed to find sandboxID for pod ${pod.metadata?.name}_${pod.metadata?.namespace}(${uid})`);
  return sandbox;
}
