/**
 * `pods/NAME/portforward`: port-forward served by the agent's runtime, in every protocol a client
 * speaks. kubectl 1.27 to 1.30 POST a SPDY/3.1 upgrade (`portforward.k8s.io`); 1.31+ GET a
 * WebSocket carrying SPDY (`SPDY/3.1+portforward.k8s.io`, spdy-tunnel.ts) and fall back to the
 * POST when that is refused; either way the session is the same (portforward-session.ts). The
 * client libraries GET a WebSocket of the channel protocol (`v4.channel.k8s.io`, its base64
 * variant, or none offered) with the ports in the query (portforward-ws-session.ts), which the API
 * server hands to the kubelet as it is. Checks are made before the upgrade, so a bad port, a missing
 * pod or one without a sandbox is a plain Status the client prints; the pod's sandbox is found
 * once, and each forwarded connection asks the runtime where to dial its port.
 */
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { PORT_FORWARD_PROTOCOL, PortForwardSession } from "./portforward-session.ts";
import { choosePortForwardChannelProtocol, parsePortsQuery, PORT_FORWARD_CHANNEL_PROTOCOLS, portsToForward, type PortForwardChannelProtocol } from "./portforward-ws-options.ts";
import { PortForwardWebSocketSession } from "./portforward-ws-session.ts";
import { SPDY_TUNNEL_PREFIX, SpdyOverWebSocket } from "../streaming/spdy-tunnel.ts";
import { ApiError } from "../http/status.ts";
import { offersProtocol, requireRuntime, takeSessionSlot, upgradeSpdy } from "../streaming/streaming.ts";
import type { Runtime, Sandbox } from "../../runtime/runtime.ts";
import type { V1Pod } from "../../v1/v1.ts";

const PORT_FORWARD_PATH = "/api/v1/namespaces/:namespace/pods/:name/portforward";

/** The WebSocket subprotocol of kubectl 1.31+: SPDY tunnelled. */
export const TUNNELED_PORT_FORWARD_PROTOCOL = SPDY_TUNNEL_PREFIX + PORT_FORWARD_PROTOCOL;

export const portForwardRoutes: Route[] = [
  { method: "GET", path: PORT_FORWARD_PATH, handle: handlePortForward },
  { method: "POST", path: PORT_FORWARD_PATH, handle: handlePortForward },
];

/** The WebSocket subprotocols served, in the order a refusal names them. */
const WEBSOCKET_PROTOCOLS = [TUNNELED_PORT_FORWARD_PROTOCOL, ...PORT_FORWARD_CHANNEL_PROTOCOLS];

/** How a request's connection is served once upgraded. */
type Transport = { kind: "spdy" } | { kind: "tunnel" } | { kind: "channels"; protocol: PortForwardChannelProtocol };

async function handlePortForward(request: ApiRequest, api: ApiContext): Promise<Response> {
  const { namespace = "", name = "" } = request.params;
  return servePortForward(request, api, namespace, name);
}

/** One port-forward as pods/portforward serves it; the kubelet port's `/portForward/NS/POD` is the same. */
export async function servePortForward(request: ApiRequest, api: ApiContext, namespace: string, name: string): Promise<Response> {
  // The API server converts the query before it looks the pod up.
  const ports = parsePortsQuery(request.query);
  const pod = api.store.livePods({ namespace, name })[0]?.object;
  if (!pod) throw ApiError.notFound("pods", name);
  const runtime = requireRuntime(api, "port-forward");
  const transport = chooseTransport(request.headers);
  // The kubelet takes the ports from the query for the channel protocol only: SPDY streams name their own.
  const channelPorts = transport.kind === "channels" ? portsToForward(ports) : [];
  const sandbox = await podSandbox(runtime, pod);
  const release = takeSessionSlot(api, "port-forward", api.limits.maxPortForwardSessions);
  if (release instanceof Response) return release;
  const target = { address: (port: number) => runtime.portForwardAddress(sandbox, port), sandboxId: sandbox.id, clock: api.clock };
  let refused: Response | undefined;
  if (transport.kind === "channels") {
    refused = request.upgrade(new PortForwardWebSocketSession({ ...target, ports: channelPorts, protocol: transport.protocol, onEnd: release }));
  } else {
    const session = new PortForwardSession({ ...target, onEnd: release });
    refused = transport.kind === "spdy" ? upgradeSpdy(request, session) : request.upgrade(new SpdyOverWebSocket(session, api.clock));
  }
  if (refused) {
    release();
    return refused;
  }
  return new Response(null, { status: 101 });
}

/**
 * The transport the upgrade asks for: SPDY by `Upgrade: SPDY/3.1`; on a WebSocket the SPDY tunnel
 * whenever it is offered (the API server's check, before any proxying), else the kubelet's channel
 * protocol. A refusal names what is served.
 */
function chooseTransport(headers: Headers): Transport {
  const upgrade = (headers.get("upgrade") ?? "").toLowerCase();
  if (upgrade !== "websocket" && upgrade !== "spdy/3.1") {
    throw ApiError.badRequest(`port-forward needs a connection upgrade: to websocket (${WEBSOCKET_PROTOCOLS.join(", ")}) or SPDY/3.1 (${PORT_FORWARD_PROTOCOL})`);
  }
  const spdy = upgrade === "spdy/3.1";
  const offer = headers.get(spdy ? "x-stream-protocol-version" : "sec-websocket-protocol");
  if (spdy) {
    if (offersProtocol(offer, PORT_FORWARD_PROTOCOL)) return { kind: "spdy" };
    throw ApiError.badRequest(`requested protocol(s) are not supported: ${offer ?? "none"}; supports ${PORT_FORWARD_PROTOCOL}`);
  }
  if (offersProtocol(offer, TUNNELED_PORT_FORWARD_PROTOCOL)) return { kind: "tunnel" };
  const protocol = choosePortForwardChannelProtocol(offer);
  if (protocol !== undefined) return { kind: "channels", protocol };
  throw ApiError.badRequest(`requested protocol(s) are not supported: ${offer}; supports ${WEBSOCKET_PROTOCOLS.join(", ")}`);
}

/** The pod's running sandbox, as the kubelet's GetPortForward finds it (by the pod's uid), in its words when there is none. */
async function podSandbox(runtime: Pick<Runtime, "listPodSandboxes">, pod: V1Pod): Promise<Sandbox> {
  const uid = pod.metadata?.uid ?? "";
  const sandbox = (await runtime.listPodSandboxes()).find((candidate) => candidate.podUid === uid && candidate.ready);
  if (!sandbox) throw new ApiError(500, "InternalError", `failed to find sandboxID for pod ${pod.metadata?.name}_${pod.metadata?.namespace}(${uid})`);
  return sandbox;
}
