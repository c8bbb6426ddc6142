/**
 * SPDY/3.1 framing (spdy-transport) on a connection the API server upgraded, as the server side of
 * Go's spdystream (what kubectl 1.27 to 1.29 use for exec): the client opens the streams, the
 * server answers each, writes on some, and ends them all. The untyped library stays in this file.
 */
import type { Duplex } from "node:stream";
import type { Clock } from "../../clock.ts";
// @ts-expect-error spdy-transport ships no types; the few calls made on it are typed below.
import transport from "spdy-transport";

/** One stream the client opened: its headers (lower-case names), and a Duplex for its data. */
export interface SpdyStream extends Duplex {
  /** The stream's SPDY id: odd, rising in the order the client opened its streams. */
  id: number;
  headers: Record<string, string>;
  /**
   * Queues the SYN_REPLY; `written` is called once it is on its way to the socket (with an error
   * when the stream was gone). Its headers are compressed first, asynchronously: frames of other
   * streams, and GOAWAY, queued before that can overtake it.
   */
  respond(status: number, headers: Record<string, string>, written?: (error: Error | null) => void): void;
}

export interface SpdyConnection {
  onStream(handler: (stream: SpdyStream) => void): void;
  /** Called once, when the connection is gone (the client left, or it was cut). */
  onClose(handler: () => void): void;
  /**
   * Our side is done, every stream ended: the client closes the connection once it has read them
   * (kubectl does); one that has not after CLOSE_GRACE_MS is cut. No GOAWAY: spdystream stops
   * reading at it, so a frame the scheduler put behind it (it sends control frames before queued
   * data) would never be seen and kubectl would wait for it.
   */
  finish(): void;
  /** Gives up on the connection: says GOAWAY, and the socket is cut after CLOSE_GRACE_MS. */
  end(): void;
}

interface TransportConnection {
  on(event: "stream", handler: (stream: SpdyStream) => void): void;
  on(event: "close" | "error", handler: (error?: Error) => void): void;
  end(): void;
  destroyStreams(error?: Error): void;
  start(version: number): void;
  _spdyState: {
    streamWindow: { send: { max: number; limit: number; current: number } };
    parser: { parseKVs(buffer: unknown, callback: ParsedHeaders): void };
  };
}

type ParsedHeaders = (error: Error | null, headers?: Record<string, string>) => void;

/**
 * spdy-transport takes every stream for an HTTP request and refuses a SYN_STREAM without
 * `:method` and `:path`; spdystream's streams carry only their own headers (`streamType`).
 */
const HTTP_REQUEST_HEADERS = { ":method": "POST", ":path": "/" };

/** A send window no output reaches: spdystream ignores WINDOW_UPDATE and never sends one. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** After our last frame (or GOAWAY), the time a client has to close the connection before it is cut. */
export const CLOSE_GRACE_MS = 5000;

/**
 * How long a client has to open the streams that belong together (exec's channels, a port-forward
 * connection's data and error pair). The kubelet allows 30 s, as long as kubectl waits for each
 * stream's reply; kubectl opens them within a few round trips, so a set still incomplete after this
 * is stuck, and is ended with an error rather than left hanging.
 */
export const STREAM_CREATION_TIMEOUT_MS = 10_000;

export function acceptSpdy(socket: Duplex, clock: Clock): SpdyConnection {
  const connection = (transport as { connection: { create(socket: Duplex, options: object): TransportConnection } }).connection.create(socket, {
    protocol: "spdy",
    isServer: true,
    // The largest receive window: no WINDOW_UPDATE is ever due. spdystream ignores them, and under
    // Bun 1.3 one written while the client uploads fast made the TLS layer fail the connection.
    windowSize: 0x7fffffff,
  });
  // Without this the server would stop writing after 64 KiB of output on a stream, waiting for a
  // window update that spdystream never sends (it does no flow control at all).
  const send = connection._spdyState.streamWindow.send;
  send.max = UNBOUNDED;
  send.current = UNBOUNDED;
  send.limit = Infinity;
  const parser = connection._spdyState.parser;
  const parseKVs = parser.parseKVs.bind(parser);
  parser.parseKVs = (buffer, callback) => parseKVs(buffer, (error, headers) => callback(error, headers && { ...HTTP_REQUEST_HEADERS, ...headers }));
  let closed = false;
  let cancelCut: (() => void) | undefined;
  const closeHandlers: (() => void)[] = [];
  const closedNow = () => {
    if (closed) return;
    closed = true;
    cancelCut?.();
    for (const handler of closeHandlers) handler();
  };
  connection.on("close", closedNow);
  connection.on("error", () => {
    connection.destroyStreams();
    discard(socket);
  });
  socket.on("close", closedNow);
  socket.on("error", () => discard(socket));
  return {
    onStream: (handler) => connection.on("stream", handler),
    onClose: (handler) => (closed ? handler() : closeHandlers.push(handler)),
    finish() {
      if (closed || cancelCut) return;
      cancelCut = clock.setTimeout(() => discard(socket), CLOSE_GRACE_MS);
    },
    end() {
      if (closed || cancelCut) return;
      connection.end();
      cancelCut = clock.setTimeout(() => discard(socket), CLOSE_GRACE_MS);
    },
  };
}

/**
 * Closes a socket that may be piped somewhere and paused. Bun 1.3 spins a core forever (and then
 * ignores SIGTERM) when such a TLS socket is destroyed as it is: it is unpiped and flowing first.
 */
export function discard(socket: Duplex): void {
  socket.unpipe();
  socket.resume();
  socket.destroy();
}
