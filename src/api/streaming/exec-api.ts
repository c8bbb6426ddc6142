/**
 * `pods/NAME/exec`: kubectl exec over WebSocket (exec-protocol.ts) or SPDY (exec-spdy-session.ts),
 * run by the agent's runtime. Checks are made before the upgrade (stream-target.ts), so a missing
 * pod or a stopped container is a plain Status kubectl prints; once upgraded
 * (stream-upgrade.ts), the command's end (or failure) is the Status on channel 3.
 */
import type { ApiContext } from "../http/context.ts";
import { ExecWebSocketSession } from "./exec-session.ts";
import { ExecSpdySession } from "./exec-spdy-session.ts";
import { parseExecOptions, type ExecOptions } from "./exec-protocol.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { ApiError } from "../http/status.ts";
import { chooseContainer, findPod, runningContainerId } from "./stream-target.ts";
import { upgradeStream } from "./stream-upgrade.ts";
import { requireRuntime } from "./streaming.ts";

export { DEFAULT_CONTAINER_ANNOTATION } from "./stream-target.ts";

const EXEC_PATH = "/api/v1/namespaces/:namespace/pods/:name/exec";

export const execRoutes: Route[] = [
  { method: "GET", path: EXEC_PATH, handle: handleExec },
  // kubectl before 1.30, and 1.30+ after a refused WebSocket, POST for SPDY.
  { method: "POST", path: EXEC_PATH, handle: handleExec },
];

async function handleExec(request: ApiRequest, api: ApiContext): Promise<Response> {
  const { namespace = "", name = "" } = request.params;
  return serveExec(request, api, namespace, name, parseExecOptions(request.query));
}

/**
 * One exec as pods/exec serves it; the kubelet port's `/exec/NS/POD/CONTAINER` is the same with
 * the container from its path and the kubelet's stream parameter names.
 */
export async function serveExec(request: ApiRequest, api: ApiContext, namespace: string, name: string, options: ExecOptions): Promise<Response> {
  const pod = findPod(api, namespace, name).object;
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") throw ApiError.badRequest(`cannot exec into a container in a completed pod; current phase is ${phase}`);
  const container = chooseContainer(pod, options.container);
  const runtime = requireRuntime(api, "exec");
  // The kubelet's words for a container with no running attempt.
  const containerId = runningContainerId(pod, container, `container not found ("${container}"): it is not running`);
  return upgradeStream(request, api, "exec", {
    webSocket: (protocol, onEnd, clock) => new ExecWebSocketSession({ runtime, containerId, options, onEnd }, protocol, clock),
    spdy: (onEnd, clock) => new ExecSpdySession({ runtime, containerId, options, onEnd }, clock),
  });
}
