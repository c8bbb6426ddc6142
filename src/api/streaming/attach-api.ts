/**
 * `pods/NAME/attach` (`kubectl attach`, `kubectl run -i`): the container's main process, over the
 * same WebSocket and SPDY framings as exec (stream-upgrade.ts). As the kubelet does, the terminal is
 * the container's own (its spec's tty: a running process cannot change it), and stdin reaches only a
 * container created with stdin (for one without, the engine and containerd drop it, and so do we).
 * What the runtime cannot serve (attachSupport) is refused before the upgrade, with why.
 */
import { outputLogRun, runtimeAttachRun, type AttachRunOptions } from "./attach-run.ts";
import type { ApiContext } from "../http/context.ts";
import { parseStreamOptions, type ExecOptions } from "./exec-protocol.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { ApiError } from "../http/status.ts";
import type { StreamFlags, StreamRun } from "./stream-run.ts";
import { StreamSpdySession } from "./stream-spdy.ts";
import { chooseContainer, containerSpec, findPod, runningContainerId } from "./stream-target.ts";
import { upgradeStream } from "./stream-upgrade.ts";
import { requireRuntime } from "./streaming.ts";
import { StreamWebSocketSession } from "./stream-websocket.ts";

type StreamOptions = Omit<ExecOptions, "command">;

const ATTACH_PATH = "/api/v1/namespaces/:namespace/pods/:name/attach";

export const attachRoutes: Route[] = [
  { method: "GET", path: ATTACH_PATH, handle: handleAttach },
  // kubectl before 1.30, and 1.30+ after a refused WebSocket, POST for SPDY.
  { method: "POST", path: ATTACH_PATH, handle: handleAttach },
];

async function handleAttach(request: ApiRequest, api: ApiContext): Promise<Response> {
  const { namespace = "", name = "" } = request.params;
  return serveAttach(request, api, namespace, name, parseStreamOptions(request.query));
}

/** One attach as pods/attach serves it; the kubelet port's `/attach/NS/POD/CONTAINER` is the same with the container from its path. */
export async function serveAttach(request: ApiRequest, api: ApiContext, namespace: string, name: string, asked: StreamOptions): Promise<Response> {
  const row = findPod(api, namespace, name);
  const pod = row.object;
  const phase = pod.status?.phase;
  // kubectl's own words; it checks this before asking, and so does the API for other clients.
  if (phase === "Succeeded" || phase === "Failed") throw ApiError.badRequest(`cannot attach a container in a completed pod; current phase is ${phase}`);
  const container = chooseContainer(pod, asked.container);
  const runtime = requireRuntime(api, "attach");
  // The kubelet's words (GetAttach finds only running containers; its pod full name is NAME_NAMESPACE).
  const containerId = runningContainerId(pod, container, `container ${container} not found in pod ${name}_${namespace}: it is not running`);
  const spec = containerSpec(pod, container);
  const tty = spec?.tty === true;
  const flags: StreamFlags = { stdin: asked.stdin && spec?.stdin === true, stdout: asked.stdout, stderr: asked.stderr && !tty, tty };
  const support = runtime.attachSupport({ stdin: flags.stdin, tty });
  if (support.kind === "refused") throw ApiError.badRequest(`cannot attach to container ${container} in pod ${name}: ${support.reason}`);
  const run = (onEnd: () => void): StreamRun => {
    const options: AttachRunOptions = { flags, onEnd };
    return support.kind === "streams" ? runtimeAttachRun(runtime, containerId, options) : outputLogRun(api, row, container, options);
  };
  return upgradeStream(request, api, "attach", {
    webSocket: (protocol, onEnd, clock) => new StreamWebSocketSession(run(onEnd), protocol, clock),
    // The client opens the streams its query asked for, whichever of them the container can feed.
    spdy: (onEnd, clock) => new StreamSpdySession(run(onEnd), asked, clock),
  });
}
