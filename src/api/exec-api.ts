/**
 * `pods/NAME/exec`: kubectl exec over WebSocket (exec-protocol.ts), run by the agent's runtime.
 * Checks are made before the upgrade, so a missing pod or a stopped container is a plain Status
 * kubectl prints; once upgraded, the command's end (or failure) is the Status on channel 3.
 * kubectl 1.30+ speaks WebSocket (a GET); 1.27 to 1.29 SPDY/3.1 (a POST, exec-spdy-session.ts),
 * which 1.29 and 1.30+ also fall back to when a WebSocket upgrade is refused.
 */
import type { ApiContext } from "./context.ts";
import { ExecWebSocketSession } from "./exec-session.ts";
import { ExecSpdySession, SPDY_EXEC_PROTOCOL } from "./exec-spdy-session.ts";
import { chooseExecProtocol, EXEC_PROTOCOLS, parseExecOptions } from "./exec-protocol.ts";
import type { ApiRequest, Route } from "./http.ts";
import { ApiError } from "./status.ts";
import { offersProtocol, requireRuntime, takeSessionSlot, upgradeSpdy } from "./streaming.ts";
import type { V1Pod } from "../status/v1.ts";

const EXEC_PATH = "/api/v1/namespaces/:namespace/pods/:name/exec";

/** The annotation naming the container kubectl and the API default to. */
export const DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container";

export const execRoutes: Route[] = [
  { method: "GET", path: EXEC_PATH, handle: handleExec },
  // kubectl before 1.30, and 1.30+ after a refused WebSocket, POST for SPDY.
  { method: "POST", path: EXEC_PATH, handle: handleExec },
];

async function handleExec(request: ApiRequest, api: ApiContext): Promise<Response> {
  const { namespace = "", name = "" } = request.params;
  const options = parseExecOptions(request.query);
  const pod = api.store.livePods({ namespace, name })[0]?.object;
  if (!pod) throw ApiError.notFound("pods", name);
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") throw ApiError.badRequest(`cannot exec into a container in a completed pod; current phase is ${phase}`);
  const container = chooseContainer(pod, options.container);
  const runtime = requireRuntime(api, "exec");
  const containerId = runningContainerId(pod, container);
  const upgrade = (request.headers.get("upgrade") ?? "").toLowerCase();
  if (upgrade !== "websocket" && upgrade !== "spdy/3.1") {
    throw ApiError.badRequest(`exec needs a connection upgrade: to websocket (${EXEC_PROTOCOLS.join(", ")}) or SPDY/3.1 (${SPDY_EXEC_PROTOCOL})`);
  }
  const spdy = upgrade === "spdy/3.1";
  const offer = request.headers.get(spdy ? "x-stream-protocol-version" : "sec-websocket-protocol");
  const webSocketProtocol = spdy ? undefined : chooseExecProtocol(offer);
  if (spdy ? !offersProtocol(offer, SPDY_EXEC_PROTOCOL) : !webSocketProtocol) {
    const supported = spdy ? SPDY_EXEC_PROTOCOL : EXEC_PROTOCOLS.join(", ");
    throw ApiError.badRequest(`requested protocol(s) are not supported: ${offer ?? "none"}; supports ${supported}`);
  }
  const release = takeSessionSlot(api, "exec", api.limits.maxExecSessions);
  if (release instanceof Response) return release;
  const run = { runtime, containerId, options, onEnd: release };
  const refused = webSocketProtocol ? request.upgrade(new ExecWebSocketSession(run, webSocketProtocol, api.clock)) : upgradeSpdy(request, new ExecSpdySession(run, api.clock));
  if (refused) {
    release();
    return refused;
  }
  return new Response(null, { status: 101 });
}

/** The container asked for, else the default-container annotation's, else the first. */
function chooseContainer(pod: V1Pod, asked: string | undefined): string {
  const names = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((container) => container.name);
  const podName = pod.metadata?.name ?? "";
  if (asked !== undefined) {
    if (!names.includes(asked)) throw ApiError.badRequest(`container ${asked} is not valid for pod ${podName}`);
    return asked;
  }
  const annotated = pod.metadata?.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated && names.includes(annotated)) return annotated;
  const first = pod.spec?.containers?.[0]?.name;
  if (!first) throw ApiError.badRequest(`pod ${podName} has no containers`);
  return first;
}

/** The runtime id of the container's running attempt, from the status the agent recorded. */
function runningContainerId(pod: V1Pod, container: string): string {
  const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  const status = statuses.find((candidate) => candidate.name === container);
  const id = status?.state?.running ? status.containerID?.split("://")[1] : undefined;
  // The kubelet's words for a container with no running attempt.
  if (!id) throw ApiError.badRequest(`container not found ("${container}"): it is not running`);
  return id;
}
