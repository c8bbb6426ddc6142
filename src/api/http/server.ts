/**
 * The API's HTTPS listener: checks the bearer token, bounds the request, finds the route by path
 * pattern and method, and turns whatever a handler throws into a v1 Status (ApiError as it says,
 * anything else as a 500 InternalError) so one bad request never takes the server down. Streams
 * (watch, logs -f) and WebSocket sessions (exec) are the routes' own; the server only tells them
 * when their client goes away. Bun.serve listens on a private Unix socket behind the TLS front door
 * (front-door.ts), which hands it every connection but kubectl's SPDY upgrades, served here too.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { Server, ServerWebSocket } from "bun";
import type { Clock } from "../../clock.ts";
import type { ApiContext } from "./context.ts";
import { openFrontDoor } from "./front-door.ts";
import type { CertificateUser } from "./certificate-user.ts";
import type { Http2Connection } from "./http2-streams.ts";
import { makeSocketDir } from "./socket-dir.ts";
import type { ApiRequest, ApiSocket, Route, WebSocketSession } from "./http.ts";
import { queryFlag } from "./query-flags.ts";
import { holdUntilDone, isLongRunning, isStream, RequestLimits } from "./request-limits.ts";
import { acceptSpdy } from "./spdy.ts";
import { ApiError, statusResponse } from "./status.ts";

export interface ListenAddress {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
}

export interface ApiServerOptions {
  listen: ListenAddress;
  context: ApiContext;
  routes: readonly Route[];
  tls: { cert: string; key: string };
  token: string;
  /** PEM of the CA whose verified client certificates reach `gate` as a CertificateUser. */
  clientCa?: string;
  /** Decides who may be served in place of the token check (`token` is then unused). */
  gate?: RequestGate;
  /**
   * Paths any client may GET without a token (exact, none below them): the API's
   * PUBLIC_INFO_PATHS. None by default: the kubelet's own endpoints want the token on every path.
   */
  publicPaths?: ReadonlySet<string>;
  /** Offer HTTP/2 as well (the kubelet port: the API server's requests to a node). */
  http2?: boolean;
  /** One line per request that failed on the server's side (500s). */
  log?: (message: string) => void;
}

/**
 * Whether a request is served, decided before routing (the kubelet port's authentication and
 * authorization in node mode). `certificate` is the client certificate's user when the request is
 * the first on a connection that presented a verified one: later requests on a kept-alive
 * connection carry no note (they reach the gate without a certificate), so the answer to a
 * certificate's request tells its client to close the connection (`Connection: close`): Go's
 * transport, the API server's, then dials again for its next request.
 * Resolves to the refusal to answer, or undefined to serve it.
 */
export type RequestGate = (request: Request, certificate: CertificateUser | undefined) => Promise<Response | undefined>;

export interface ApiServer {
  /** `https://127.0.0.1:6443` (IPv6 hosts in brackets), with the real port when 0 was asked for. */
  url: string;
  /** Connections the TLS listener holds open now. */
  openConnections(): number;
  stop(): Promise<void>;
}

/**
 * Bounds on what a request may carry before any route sees it. Bun itself answers 431 to a request
 * line plus headers over 16 KiB; the body's bound is ApiLimits.maxBodyBytes, checked here (the
 * declared length up front, a chunked body as it is read) so the answer is a 413 Status. Bun's own
 * hard stop, at twice that, still answers a bare 413 (declared) or a 400 (chunked) without reading on.
 */
export const MAX_URL_BYTES = 8 * 1024;
/** Seconds an idle connection is kept; streams and sockets opt out (see `keepsConnectionOpen`). */
const IDLE_TIMEOUT_SECONDS = 60;
const STOP_WAIT_MS = 1000;
/** The front door's note of a connection's client address on its first request (see clientOf). */
const PEER_HEADER = "x-minikubelet-peer";
/** Its note of the connection's verified client certificate (see certificateOf). */
const CERTIFICATE_HEADER = "x-minikubelet-client-certificate";

interface SocketData {
  session: WebSocketSession;
  api: ApiSocket | undefined;
}

export function startApiServer(options: ApiServerOptions): ApiServer {
  const { context, token } = options;
  const table = compileRoutes(options.routes);
  const stopping = new AbortController();
  const log = options.log ?? ((message: string) => process.stderr.write(`minikubelet: ${message}\n`));
  const expected = Buffer.from(token);
  const publicPaths = options.publicPaths ?? new Set<string>();

  const requestLimits = new RequestLimits(context.limits, context.clock);
  // Only the front door knows it: a client's own copy of the header cannot carry it.
  const peerSecret = randomBytes(16).toString("hex");

  /** One request, from Bun.serve (`via.server`) or the front door's SPDY upgrade (`via.raw`). */
  async function dispatch(request: Request, via: Upgraders): Promise<Response | undefined> {
    if (!options.gate) return serve(request, via, undefined);
    const certificate = via.raw ? via.raw.certificate : via.h2 ? via.h2.certificate : certificateOf(request.headers, peerSecret);
    const response = await serve(request, via, certificate);
    // The next request on this connection would come without the note: the client should open its own.
    // An HTTP/2 connection's streams all carry its certificate.
    if (certificate && response && !via.raw && !via.h2) response.headers.set("Connection", "close");
    return response;
  }

  async function serve(request: Request, via: Upgraders, certificate: CertificateUser | undefined): Promise<Response | undefined> {
    let release = () => {};
    try {
      const refused = (options.gate ? await options.gate(request, certificate) : checkToken(request, expected, publicPaths)) ?? checkBounds(request, context.limits.maxBodyBytes);
      if (refused) return refused;
      const url = new URL(request.url);
      const found = table.find(url.pathname, request.method);
      // The API server fills details even here (empty, NewGenericServerResponse): clients read details.name off every 404 (kubectl debug does).
      if (found === "no-path") throw new ApiError(404, "NotFound", "the server could not find the requested resource", {});
      if (found === "no-method") throw new ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {});
      const admitted = requestLimits.admit(request.method, found.route.path, url, via.raw?.peer ?? via.h2?.peer ?? clientOf(request.headers, peerSecret));
      if (admitted instanceof Response) return admitted;
      release = admitted;
      if (keepsConnectionOpen(url, request)) via.server?.timeout(request, 0);
      const timeout = new AbortController();
      const apiRequest = toApiRequest(request, url, found.params, via, AbortSignal.any([stopping.signal, timeout.signal]), context.limits.maxBodyBytes);
      const handle = async () => found.route.handle(apiRequest, context);
      const response = isLongRunning(found.route.path, url) ? await handle() : await requestLimits.timed(handle, timeout);
      // Once upgraded, the connection is the WebSocket's: whatever the route returned (it must
      // return a Response by type, e.g. `request.upgrade(session) ?? new Response(null, { status: 101 })`) is not sent.
      if (apiRequest.upgraded) return undefined;
      if (!response) throw new Error(`the route ${found.route.path} gave no response`);
      if (isStream(found.route.path, url)) {
        const held = holdUntilDone(response, release, apiRequest.signal);
        release = () => {};
        return held;
      }
      return response;
    } catch (error) {
      if (error instanceof ApiError) return statusResponse(error, error.code === 413 ? BODY_LEFT_UNREAD : {});
      log(`api: ${request.method} ${new URL(request.url).pathname}: ${(error as Error)?.stack ?? String(error)}`);
      return statusResponse(ApiError.internal((error as Error)?.message ?? String(error)));
    } finally {
      release();
    }
  }

  // 0700: only this user reaches the plain-HTTP side (the token is still checked there).
  const socketDir = makeSocketDir(context.dbPath);
  const socketPath = join(socketDir, "api.sock");
  const server: Server<SocketData> = Bun.serve<SocketData>({
    unix: socketPath,
    // Bun's hard stop for a body that goes on past our own bound (checked in checkBounds and as a
    // chunked body is read): without one, a client could stream a body forever.
    maxRequestBodySize: context.limits.maxBodyBytes * 2,
    // Typed for TCP listeners only; Bun applies it to a Unix socket's connections as well.
    ...({ idleTimeout: IDLE_TIMEOUT_SECONDS } as object),
    fetch: (request, server) => dispatch(request, { server }),
    websocket: {
      // Exec frames are binary; a slow client's back-pressure is the session's to handle (drain).
      sendPings: true,
      open(ws) {
        ws.data.api = apiSocket(ws);
        guard(ws, log, (session, socket) => session.open(socket));
      },
      message(ws, message) {
        const data = typeof message === "string" ? new TextEncoder().encode(message) : new Uint8Array(message.buffer, message.byteOffset, message.byteLength);
        guard(ws, log, (session, socket) => session.message(socket, data));
      },
      close(ws, code, reason) {
        guard(ws, log, (session, socket) => session.close(socket, code, reason));
      },
      drain(ws) {
        guard(ws, log, (session, socket) => session.drain?.(socket));
      },
    },
    error(error) {
      log(`api: ${error.stack ?? error.message}`);
      return statusResponse(ApiError.internal(error.message));
    },
  });

  let front;
  try {
    front = openFrontDoor({
      hostname: options.listen.hostname,
      port: options.listen.port,
      tls: options.tls,
      ...(options.clientCa !== undefined && { clientCa: options.clientCa }),
      inner: socketPath,
      clock: context.clock,
      maxConnections: context.limits.maxConnections,
      tlsHandshakeTimeoutMs: context.limits.tlsHandshakeTimeoutMs,
      readHeaderTimeoutMs: context.limits.readHeaderTimeoutMs,
      peer: { header: PEER_HEADER, certificateHeader: CERTIFICATE_HEADER, secret: peerSecret },
      spdy: (request, socket, rest, peer, certificate) => dispatch(request, { raw: { socket, rest, clock: context.clock, peer, certificate } }),
      ...(options.http2 && { http2: { serve: (request, connection) => dispatch(request, { h2: connection }), idleMs: IDLE_TIMEOUT_SECONDS * 1000 } }),
    });
  } catch (error) {
    server.stop(true);
    rmSync(socketDir, { recursive: true, force: true });
    throw error;
  }
  const host = front.hostname;
  const door = front;
  return {
    url: `https://${host.includes(":") ? `[${host}]` : host}:${front.port}`,
    openConnections: () => door.openConnections(),
    async stop() {
      stopping.abort(new Error("the API server is stopping"));
      door.close();
      // Forced: open streams and sockets end now. Bun 1.3 never resolves this once a WebSocket was
      // closed from the server's side (it keeps counting it as pending), so the wait is bounded.
      const stopped = server.stop(true);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([stopped, new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(timer);
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * The subprotocol to answer a WebSocket upgrade with: the first of `supported` (in our order of
 * preference) that the client offered in `Sec-WebSocket-Protocol`, or undefined.
 */
export function chooseSubprotocol(headers: Headers, supported: readonly string[]): string | undefined {
  const offered = new Set((headers.get("sec-websocket-protocol") ?? "").split(",").map((protocol) => protocol.trim()));
  return supported.find((protocol) => offered.has(protocol));
}

function checkBounds(request: Request, maxBodyBytes: number): Response | undefined {
  if (request.url.length > MAX_URL_BYTES) return statusResponse(new ApiError(414, "BadRequest", `the request URL is longer than ${MAX_URL_BYTES} bytes`));
  if (Number(request.headers.get("content-length") ?? 0) > maxBodyBytes) return statusResponse(bodyTooLarge(maxBodyBytes), BODY_LEFT_UNREAD);
  return undefined;
}

/**
 * A refused body is left unread on the connection, and what follows it there is no request: the
 * client is told to open a new one, as Go's server closes a connection whose body it did not drain.
 */
const BODY_LEFT_UNREAD = { Connection: "close" };

function bodyTooLarge(maxBytes: number): ApiError {
  // limitedReadBody's NewRequestEntityTooLargeError.
  return new ApiError(413, "RequestEntityTooLarge", `Request entity too large: limit is ${maxBytes}`);
}

/**
 * What the API server's default RBAC (system:public-info-viewer, bound to system:unauthenticated)
 * lets anyone GET: these exact paths, none below them.
 */
export const PUBLIC_INFO_PATHS: ReadonlySet<string> = new Set(["/livez", "/readyz", "/healthz", "/version", "/version/"]);

/**
 * The API server's answer to a missing or wrong token; kubectl prints "You must be logged in to the
 * server (Unauthorized)". The header is read as its bearer token authenticator reads it: trimmed,
 * the scheme in any case, the token the second space-separated part. No header at all is an
 * anonymous request, which may read the public paths; a wrong token is refused everywhere.
 */
function checkToken(request: Request, expected: Buffer, publicPaths: ReadonlySet<string>): Response | undefined {
  const header = request.headers.get("authorization");
  if (header === null && request.method === "GET" && publicPaths.has(new URL(request.url).pathname)) return undefined;
  const [scheme = "", token = ""] = (header ?? "").trim().split(" ", 2);
  const given = Buffer.from(token);
  if (scheme.toLowerCase() === "bearer" && given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
  return statusResponse(new ApiError(401, "Unauthorized", "Unauthorized"), { "WWW-Authenticate": 'Bearer realm="minikubelet"' });
}

/** Watches (the deprecated watch paths too), followed logs and upgrades stay open as long as their client wants: no idle cut-off. */
function keepsConnectionOpen(url: URL, request: Request): boolean {
  const yes = (name: string) => queryFlag(url.searchParams, name) === true;
  return yes("watch") || yes("follow") || request.headers.get("upgrade") !== null || url.pathname.startsWith("/api/v1/watch/");
}

/**
 * Where a request came from, and how its connection can be taken over: Bun.serve's WebSocket
 * upgrade, the raw socket of a first request, or (an HTTP/2 stream) not at all.
 */
interface Upgraders {
  server?: Server<SocketData>;
  raw?: { socket: Duplex; rest: Buffer; clock: Clock; peer: string; certificate: CertificateUser | undefined };
  h2?: Http2Connection;
}

/**
 * The client's address as the front door noted it on the connection's first request. A later
 * request on a kept-alive connection has no note: those share one unnamed client.
 */
function clientOf(headers: Headers, secret: string): string {
  for (const value of (headers.get(PEER_HEADER) ?? "").split(",")) {
    const [given, address] = value.trim().split(" ", 2);
    if (given === secret && address) return address;
  }
  return "";
}

/** The verified client certificate the front door noted on the connection's first request, if any. */
function certificateOf(headers: Headers, secret: string): CertificateUser | undefined {
  for (const value of (headers.get(CERTIFICATE_HEADER) ?? "").split(",")) {
    const [given, encoded] = value.trim().split(" ", 2);
    if (given !== secret || !encoded) continue;
    try {
      return JSON.parse(decodeURIComponent(encoded)) as CertificateUser;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function toApiRequest(request: Request, url: URL, params: Record<string, string>, via: Upgraders, stopping: AbortSignal, maxBodyBytes: number): ApiRequest & { upgraded: boolean } {
  let bodyRead = false;
  return {
    upgraded: false,
    method: request.method,
    url,
    headers: request.headers,
    params,
    query: url.searchParams,
    signal: AbortSignal.any([request.signal, stopping]),
    async body() {
      if (bodyRead) throw new Error("the request body was already read");
      bodyRead = true;
      return readBounded(request, maxBodyBytes);
    },
    upgrade(session) {
      if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
        return statusResponse(ApiError.badRequest("this resource is served over WebSocket: the request must ask for an upgrade to websocket"));
      }
      const headers = session.protocol ? { "Sec-WebSocket-Protocol": session.protocol } : undefined;
      if (via.server?.upgrade(request, { headers, data: { session, api: undefined } })) {
        this.upgraded = true;
        return undefined;
      }
      return statusResponse(ApiError.badRequest("the WebSocket upgrade failed"));
    },
    upgradeSpdy(session) {
      // The front door passes only a connection's first request here; a later one reached Bun.serve.
      if (!via.raw) return statusResponse(ApiError.badRequest("a SPDY upgrade must be the first request on its connection"));
      const { socket, rest, clock } = via.raw;
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${session.protocol}\r\n\r\n`);
      if (rest.length > 0) socket.unshift(rest);
      session.open(acceptSpdy(socket, clock));
      this.upgraded = true;
      return undefined;
    },
  };
}

/** A chunked body has no length up front: it is counted as it arrives. */
async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of request.body) {
    total += chunk.byteLength;
    if (total > maxBytes) throw bodyTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A session that throws ends its own socket (1011, as a server error) and nothing else. */
function guard(ws: ServerWebSocket<SocketData>, log: (message: string) => void, call: (session: WebSocketSession, socket: ApiSocket) => void): void {
  const socket = (ws.data.api ??= apiSocket(ws));
  try {
    call(ws.data.session, socket);
  } catch (error) {
    log(`api: WebSocket session: ${(error as Error)?.stack ?? String(error)}`);
    ws.close(1011, "internal error");
  }
}

function apiSocket(ws: ServerWebSocket<SocketData>): ApiSocket {
  return {
    send: (data) => ws.sendBinary(data),
    sendText: (text) => ws.sendText(text),
    close: (code, reason) => ws.close(code, reason),
  };
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

/** Routes by segment count; a pattern's `:name` segment matches any one non-empty segment. */
export function compileRoutes(routes: readonly Route[]) {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: splitPath(route.path) }));
  return {
    find(pathname: string, method: string): { route: Route; params: Record<string, string> } | "no-path" | "no-method" {
      const segments = splitPath(pathname);
      let pathKnown = false;
      for (const candidate of compiled) {
        const params = matchSegments(candidate.segments, segments);
        if (!params) continue;
        pathKnown = true;
        if (candidate.route.method === method || (method === "HEAD" && candidate.route.method === "GET")) return { route: candidate.route, params };
      }
      return pathKnown ? "no-method" : "no-path";
    },
  };
}

function splitPath(path: string): string[] {
  return path.split("/").filter((segment) => segment !== "");
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, segment] of pattern.entries()) {
    const value = actual[index]!;
    if (segment.startsWith(":")) {
      try {
        params[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment !== value) return undefined;
  }
  return params;
}
