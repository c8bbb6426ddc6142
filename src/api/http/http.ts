/**
 * The seam between the API server (server.ts) and what it serves: a route is a method, a path
 * pattern and a handler from request to response. Handlers read through ApiContext and never call
 * into the loop; one that streams (watch, logs -f) ends its stream when `request.signal` aborts.
 */
import type { ApiContext } from "./context.ts";
import type { SpdyConnection } from "./spdy.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface ApiRequest {
  method: string;
  url: URL;
  headers: Headers;
  /** The route pattern's named segments, e.g. `{ namespace: "default", name: "web-lab" }`. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** Aborted when the client goes away or the server stops. */
  signal: AbortSignal;
  /** The request body, read once; the server refuses one over its limit before this resolves. */
  body(): Promise<Uint8Array>;
  /**
   * Upgrades the connection to a WebSocket served by `session` (exec). Returns the response to hand
   * back (undefined once upgraded), or a 400 Status when the request asks for no upgrade.
   */
  upgrade(session: WebSocketSession): Response | undefined;
  /**
   * Upgrades the connection to SPDY/3.1 (kubectl 1.27 to 1.29's exec), answering 101 with
   * `X-Stream-Protocol-Version: session.protocol`. Returns undefined once upgraded, else a 400 Status.
   */
  upgradeSpdy?(session: SpdySession): Response | undefined;
}

export interface Route {
  method: Method;
  /** `/api/v1/namespaces/:namespace/pods/:name/log`: `:x` matches one non-empty segment. */
  path: string;
  handle(request: ApiRequest, api: ApiContext): Response | Promise<Response>;
}

/** One upgraded connection, as the route that upgraded it drives it. */
export interface WebSocketSession {
  /** The subprotocol chosen from the client's `Sec-WebSocket-Protocol` offer (`v5.channel.k8s.io`). */
  protocol: string;
  open(socket: ApiSocket): void;
  message(socket: ApiSocket, data: Uint8Array): void;
  close(socket: ApiSocket, code: number, reason: string): void;
  /** The socket can take more after `send` reported back-pressure. */
  drain?(socket: ApiSocket): void;
}

/** One connection upgraded to SPDY: the client opens its streams on it. */
export interface SpdySession {
  /** The stream protocol chosen from the client's `X-Stream-Protocol-Version` offer (`v4.channel.k8s.io`). */
  protocol: string;
  open(connection: SpdyConnection): void;
}

export interface ApiSocket {
  /** Sends one binary message; a negative or zero result means back-pressure (see `drain`). */
  send(data: Uint8Array): number;
  /** Sends one text message (the base64 channel protocols' framing); the same result as `send`. */
  sendText(text: string): number;
  close(code?: number, reason?: string): void;
}
