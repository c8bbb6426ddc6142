/**
 * dockerode's requests carried by Bun's fetch instead of node:http. Under Bun, node:http over the
 * engine's unix socket now and then never delivers the end of a chunked response: measured here,
 * 3 image pulls in 25 hung under CPU load after the engine had finished (0 in 40 through fetch),
 * and the engine answers every body over 4 KiB (a container inspect, a list, logs) chunked, so any
 * call could stall a pod's worker for good. docker-modem still builds each request (path, query,
 * headers, body); only the last step, sending it and reading the answer, is replaced, and it keeps
 * docker-modem's answers: the parsed JSON (or the raw bytes), a Node stream for streaming calls,
 * and errors carrying `statusCode`, `reason` and `json` exactly as docker-modem builds them.
 *
 * TLS and ssh engines, hijacked (attach) calls and streamed uploads keep docker-modem's own path.
 * Also here: where the client's modem says the engine is (engineAddressOf, engineEndpoint).
 * Every non-streaming call has a deadline, like the kubelet's --runtime-request-timeout: a request
 * the engine never answers becomes an error the loop reports and retries, not a stalled pod.
 */
import { Readable } from "node:stream";
import type Dockerode from "dockerode";
import { fetchConnectionError } from "./docker-errors.ts";
import type { EngineAddress } from "./docker-logs.ts";

/** The kubelet's default --runtime-request-timeout. */
export const ENGINE_REQUEST_TIMEOUT_MS = 2 * 60_000;

/** What docker-modem's dial hands to buildRequest. */
interface RequestOptions {
  path: string;
  method: string;
  headers: Record<string, string | number>;
  socketPath?: string;
  hostname?: string;
  port?: string | number;
  signal?: AbortSignal;
}

interface RequestContext {
  isStream?: boolean;
  hijack?: boolean;
  openStdin?: boolean;
  statusCodes: Record<number, boolean | string>;
}

type Callback = (error: Error | null, result?: unknown) => void;

interface Modem {
  protocol?: string;
  buildRequest(options: RequestOptions, context: RequestContext, data: unknown, callback: Callback): void;
  [FETCH_TRANSPORT]?: true;
}

const FETCH_TRANSPORT = Symbol("minikubelet.fetchTransport");

export interface TransportOptions {
  /** Deadline for a call that does not stream; default ENGINE_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
}

/** The engine's address for the calls made with fetch alone (logs); TLS and ssh engines have none. */
export async function engineAddressOf(docker: Dockerode, call: string): Promise<EngineAddress> {
  const modem = (docker as unknown as { modem: { socketPath?: string | (() => string | Promise<string>); host?: string; port?: number | string; protocol?: string } }).modem;
  if (modem.socketPath) return { socketPath: typeof modem.socketPath === "function" ? await modem.socketPath() : modem.socketPath };
  if ((modem.protocol ?? "http") !== "http" || !modem.host) throw new Error(`${call}: an engine reached over ${modem.protocol} is not supported`);
  return { host: modem.host, port: Number(modem.port ?? 2375) };
}

/** Where the engine is expected, for error messages: the socket path or the DOCKER_HOST address. */
export function engineEndpoint(docker: Dockerode): string {
  const modem = (docker as unknown as { modem?: { socketPath?: unknown; host?: string; port?: number } }).modem;
  if (typeof modem?.socketPath === "string") return modem.socketPath;
  return modem?.host ? `${modem.host}${modem.port ? `:${modem.port}` : ""}` : (process.env.DOCKER_HOST ?? "/var/run/docker.sock");
}

/** Routes `docker`'s requests through fetch where it can (see above); returns `docker`. Idempotent. */
export function useFetchTransport(docker: Dockerode, options: TransportOptions = {}): Dockerode {
  const modem = (docker as unknown as { modem: Modem }).modem;
  if (modem[FETCH_TRANSPORT] || (modem.protocol ?? "http") !== "http") return docker;
  const timeoutMs = options.requestTimeoutMs ?? ENGINE_REQUEST_TIMEOUT_MS;
  const nodeHttp = modem.buildRequest.bind(modem);
  modem.buildRequest = (request, context, data, callback) => {
    const body = typeof data === "string" || Buffer.isBuffer(data) || data === undefined ? data : null;
    if (context.hijack || context.openStdin || body === null) return nodeHttp(request, context, data, callback);
    send(request, context, body, timeoutMs).then(
      (result) => callback(null, result),
      (error: Error) => callback(error),
    );
  };
  modem[FETCH_TRANSPORT] = true;
  return docker;
}

async function send(request: RequestOptions, context: RequestContext, body: string | Buffer | undefined, timeoutMs: number): Promise<unknown> {
  const abort = new AbortController();
  const onCallerAbort = () => abort.abort(request.signal?.reason);
  if (request.signal?.aborted) onCallerAbort();
  request.signal?.addEventListener("abort", onCallerAbort, { once: true });
  // A stream's own reader decides how long it lives (events, pulls, exec output).
  const deadline = context.isStream ? undefined : setTimeout(() => abort.abort(new EngineTimeoutError(request, timeoutMs)), timeoutMs);
  const settle = () => {
    clearTimeout(deadline);
    request.signal?.removeEventListener("abort", onCallerAbort);
  };
  let streaming = false;
  try {
    const response = await fetch(urlOf(request), {
      method: request.method,
      headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
      body,
      signal: abort.signal,
      ...(request.socketPath && { unix: request.socketPath }),
    } as RequestInit);
    if (context.statusCodes[response.status] !== true) throw await statusError(response, context);
    if (context.isStream) {
      // The caller's signal goes on ending the stream until it closes.
      streaming = true;
      return nodeStream(response, abort).once("close", settle);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    return parseJson(bytes.toString()) ?? bytes;
  } catch (error) {
    // fetch rejects with the abort's reason when there is one: keep the deadline's own error.
    if (abort.signal.aborted && abort.signal.reason instanceof Error) throw abort.signal.reason;
    throw fetchConnectionError(error);
  } finally {
    if (!streaming) settle();
  }
}

function urlOf(request: RequestOptions): string {
  if (request.socketPath) return `http://localhost${request.path}`;
  return `http://${request.hostname}${request.port ? `:${request.port}` : ""}${request.path}`;
}

/** The error docker-modem builds for an unexpected status, so callers' predicates keep working. */
async function statusError(response: Response, context: RequestContext): Promise<Error> {
  const text = await response.text().catch(() => "");
  const json = parseJson(text);
  const cause = json && typeof json === "object" ? ((json as { message?: string }).message ?? (json as { error?: string }).error ?? text) : text;
  const reason = context.statusCodes[response.status];
  const error = new Error(`(HTTP code ${response.status}) ${reason || "unexpected"} - ${cause} `) as Error & {
    reason?: unknown;
    statusCode: number;
    json: unknown;
  };
  error.reason = reason;
  error.statusCode = response.status;
  error.json = json ?? text;
  return error;
}

/**
 * The body as a Node stream whose destroy() also ends the request. Read chunk by chunk on demand
 * rather than through Readable.fromWeb: under Bun that adapter now and then stopped delivering a
 * live stream (5 of 60 `logs -f` reads stalled after their first chunk; 0 of 80 this way).
 */
function nodeStream(response: Response, abort: AbortController): Readable {
  if (!response.body) return Readable.from([]);
  const reader = response.body.getReader();
  return new Readable({
    read() {
      reader.read().then(
        ({ done, value }) => this.push(done ? null : Buffer.from(value)),
        (error: Error) => this.destroy(error),
      );
    },
    destroy(error, callback) {
      abort.abort();
      reader.cancel().catch(() => undefined);
      callback(error);
    },
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export class EngineTimeoutError extends Error {
  override readonly name = "EngineTimeoutError";
  constructor(request: RequestOptions, timeoutMs: number) {
    super(`the engine did not answer ${request.method} ${request.path.split("?")[0]} within ${timeoutMs / 1000}s`);
  }
}
