/**
 * `GET /api/v1/namespaces/:namespace/pods/:name/log`, as kubectl logs reads it: the raw output of a
 * container's current or previous attempt as text/plain, streamed (and with `follow`, kept open
 * until the container ends or the client goes away). Reading is src/logs/'s, shared with the CLI;
 * this file picks the container and attempt the way the API server and kubelet do, and words their
 * refusals as they do.
 */
import { EngineLogError, LogFileError, LogStreamsUnavailableError, NoEngineError, writeAttemptLogs, type EngineLogs } from "../../../logs/attempt-logs.ts";
import { chooseAttempt } from "../../../logs/select.ts";
import type { AttemptRow } from "../../../store/queries.ts";
import type { V1Pod } from "../../../v1/v1.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { parsePodLogQuery, type PodLogRequest } from "./log-options.ts";
import { ApiError } from "../../http/status.ts";

export const DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container";

export const logRoutes: Route[] = [{ method: "GET", path: "/api/v1/namespaces/:namespace/pods/:name/log", handle: podLog }];

async function podLog(request: ApiRequest, api: ApiContext): Promise<Response> {
  const { namespace, name } = request.params as { namespace: string; name: string };
  return servePodLog(request, api, namespace, name);
}

/**
 * One container's log as pods/log serves it; the kubelet's `/containerLogs/NS/POD/CONTAINER` is the
 * same read with the container from its path (`container` overrides the query's).
 */
export async function servePodLog(request: ApiRequest, api: ApiContext, namespace: string, name: string, container?: string): Promise<Response> {
  const options = parsePodLogQuery(request.query, api.clock.now());
  if (container !== undefined) options.container = container;
  const pod = api.store.livePods({ namespace, name })[0];
  if (!pod) throw ApiError.notFound("pods", name);
  const chosen = containerToRead(pod.object, name, options.container);
  const choice = chooseAttempt(api.store, pod, chosen, options.previous);
  if (choice.kind === "no-previous") throw ApiError.badRequest(`previous terminated container "${chosen}" in pod "${name}" not found`);
  if (choice.kind === "not-started") {
    throw ApiError.badRequest(choice.hasStatus ? waitingMessage(chosen, name, choice.waitingReason) : `container "${chosen}" in pod "${name}" is not available`);
  }
  return streamAttempt(choice.attempt, options, request, api);
}

/** The API server's choice: `container`, else the default-container annotation, else the only one. */
function containerToRead(pod: V1Pod, podName: string, requested: string | undefined): string {
  const containers = pod.spec.containers.map((c) => c.name);
  const inits = (pod.spec.initContainers ?? []).map((c) => c.name);
  const ephemeral = (pod.spec.ephemeralContainers ?? []).map((c) => c.name);
  if (requested !== undefined) {
    if (![...containers, ...inits, ...ephemeral].includes(requested)) throw ApiError.badRequest(`container ${requested} is not valid for pod ${podName}`);
    return requested;
  }
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated !== undefined && containers.includes(annotated)) return annotated;
  if (containers.length === 1) return containers[0]!;
  const initChoice = inits.length > 0 ? ` or one of the init containers: [${inits.join(" ")}]` : "";
  const ephemeralChoice = ephemeral.length > 0 ? ` or one of the ephemeral containers: [${ephemeral.join(" ")}]` : "";
  throw ApiError.badRequest(`a container name must be specified for pod ${podName}, choose one of: [${containers.join(" ")}]${initChoice}${ephemeralChoice}`);
}

/** The kubelet's words for a container with no attempt to read yet. */
function waitingMessage(container: string, pod: string, reason: string | undefined): string {
  const subject = `container "${container}" in pod "${pod}" is waiting to start`;
  if (reason === "ErrImagePull") return `${subject}: image can't be pulled`;
  if (reason === "ImagePullBackOff") return `${subject}: trying and failing to pull image`;
  return reason ? `${subject}: ${reason}` : `${subject} - no logs yet`;
}

/**
 * Answers once the output's source is open, so a failure to open it is a Status; the body then
 * follows as it is read, each chunk written when the client has taken the one before.
 */
async function streamAttempt(attempt: AttemptRow, options: PodLogRequest, request: ApiRequest, api: ApiContext): Promise<Response> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const stop = new AbortController();
  const signal = AbortSignal.any([request.signal, stop.signal]);
  const engine = engineOpener(api);
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const write = async (bytes: Uint8Array) => {
    await writer.ready;
    void writer.write(bytes).catch(() => stop.abort());
  };
  const reading = writeAttemptLogs(attempt, options, { store: api.store, clock: api.clock, signal, engine: engine.open, opened, commits: api.commits }, write).finally(() => engine.close());
  // The client leaving (the readable cancelled) ends the reading through `stop`.
  writer.closed.catch(() => stop.abort());
  try {
    await Promise.race([open, reading]);
  } catch (error) {
    void writer.abort(error).catch(() => undefined);
    throw apiErrorFor(error, attempt);
  }
  reading.then(
    () => writer.close().catch(() => undefined),
    (error) => writer.abort(error).catch(() => undefined),
  );
  return new Response(readable, { status: 200, headers: { "Content-Type": "text/plain" } });
}

/** The agent's docker runtime under `run`; else (`serve`, the CLI) a connection of our own to DOCKER_HOST. */
function engineOpener(api: ApiContext): { open: () => Promise<EngineLogs>; close: () => Promise<void> } {
  let own: { close(): Promise<void> } | undefined;
  return {
    open: async () => {
      if (api.runtime && "streamLogs" in api.runtime) return api.runtime as unknown as EngineLogs;
      const runtime = new (await import("../../../runtime/docker/docker.ts")).DockerRuntime();
      own = runtime;
      return runtime;
    },
    close: async () => await own?.close(),
  };
}

function apiErrorFor(error: unknown, attempt: AttemptRow): unknown {
  if (error instanceof ApiError) return error;
  const what = `logs of container "${attempt.container}" attempt ${attempt.attempt}`;
  if ((error instanceof EngineLogError && error.unreachable) || error instanceof NoEngineError) {
    return new ApiError(503, "ServiceUnavailable", `${error.message} (a docker container's output is read from the engine)`);
  }
  if (error instanceof LogStreamsUnavailableError) return ApiError.badRequest(error.message);
  if (error instanceof EngineLogError) return new ApiError(500, "InternalError", error.message);
  if (error instanceof LogFileError) return new ApiError(404, "NotFound", `${what}: ${error.message}`);
  return new ApiError(500, "InternalError", error instanceof Error ? error.message : String(error));
}
