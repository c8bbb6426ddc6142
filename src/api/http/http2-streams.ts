/**
 * HTTP/2 on a TLS connection whose client chose `h2` (ALPN), as the kubelet's Go server offers it:
 * each stream is a Fetch Request served like any other, its Response written back as the stream's
 * headers and data with the stream's flow control. The API server then sends a node all its plain
 * requests (logs, stats, metrics) as streams of one connection. It also needs it for one answer:
 * the v1.37.2 API server relays a WebSocket `pods/log` request (not followed) as an empty stream
 * when the kubelet answered it over HTTP/1.1, and as the log over HTTP/2 (measured with Go's own
 * server both ways). Upgrades (exec, attach, port-forward) stay on HTTP/1.1, where the API server
 * dials them.
 *
 * A connection's streams share what the TLS handshake established (the client's address and
 * certificate). A connection with no stream open is closed after `idleMs`, as Go's server closes
 * an idle one.
 */
import http2 from "node:http2";
import type { ServerHttp2Session, ServerHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http2";
import type { TLSSocket } from "node:tls";
import type { Clock } from "../../clock.ts";
import type { CertificateUser } from "./certificate-user.ts";

/** What every stream of one connection shares. */
export interface Http2Connection {
  peer: string;
  certificate: CertificateUser | undefined;
  /** Called at the connection's first stream: its first request has come. */
  onFirstStream(): void;
}

export type Http2Serve = (request: Request, connection: Http2Connection) => Promise<Response | undefined>;

/** Headers HTTP/2 forbids (RFC 9113 8.2.2): HTTP/1.1's connection-specific ones. */
const CONNECTION_SPECIFIC = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

export interface Http2Streams {
  /** Serves the connection's streams; `socket` negotiated `h2`. */
  accept(socket: TLSSocket, connection: Http2Connection): void;
  close(): void;
}

export function http2Streams(serve: Http2Serve, clock: Clock, idleMs: number): Http2Streams {
  const server = http2.createServer();
  const sessions = new Set<ServerHttp2Session>();
  let accepting: Http2Connection | undefined;

  server.on("session", (session: ServerHttp2Session) => {
    // Emitted while `accept` hands the socket over, so the connection is the one being accepted.
    const connection = accepting;
    if (!connection) return void session.destroy();
    sessions.add(session);
    let open = 0;
    let started = false;
    let cancelIdle = clock.setTimeout(() => session.close(), idleMs);
    session.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      if (!started) {
        started = true;
        connection.onFirstStream();
      }
      open++;
      cancelIdle();
      stream.once("close", () => {
        if (--open === 0 && !session.closed) cancelIdle = clock.setTimeout(() => session.close(), idleMs);
      });
      void serveStream(stream, headers, connection, serve);
    });
    session.on("error", () => session.destroy());
    session.once("close", () => {
      cancelIdle();
      sessions.delete(session);
    });
  });
  server.on("error", () => {});

  return {
    accept(socket, connection) {
      accepting = connection;
      try {
        server.emit("connection", socket);
      } finally {
        accepting = undefined;
      }
    },
    close() {
      for (const session of sessions) session.destroy();
      server.close();
    },
  };
}

async function serveStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, connection: Http2Connection, serve: Http2Serve): Promise<void> {
  const gone = new AbortController();
  stream.once("close", () => gone.abort(new Error("the client closed the stream")));
  stream.on("error", () => {});
  let response: Response | undefined;
  try {
    response = await serve(toRequest(stream, headers, gone.signal), connection);
  } catch {
    response = undefined;
  }
  if (stream.destroyed || stream.closed) return void response?.body?.cancel().catch(() => {});
  if (!response) {
    // Nothing can take over an HTTP/2 stream (an upgrade is HTTP/1.1's): a route that tried gets a plain refusal.
    stream.respond({ ":status": 400 });
    stream.end();
    return;
  }
  const outgoing: OutgoingHttpHeaders = { ":status": response.status };
  response.headers.forEach((value, name) => {
    if (!CONNECTION_SPECIFIC.has(name)) outgoing[name] = value;
  });
  const body = headers[":method"] === "HEAD" ? null : response.body;
  stream.respond(outgoing, { endStream: body === null });
  if (body === null) return;
  const reader = body.getReader();
  gone.signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!stream.write(value)) await drainedOrClosed(stream);
      if (stream.closed) return;
    }
    stream.end();
  } catch {
    stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  }
}

/** Waits for the stream to take more, or to end; neither listener outlives the wait. */
function drainedOrClosed(stream: ServerHttp2Stream): Promise<void> {
  return new Promise((resume) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resume();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

function toRequest(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, signal: AbortSignal): Request {
  const method = String(headers[":method"] ?? "GET");
  const fields = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) fields.append(name, String(one));
  }
  if (headers[":authority"] && !fields.has("host")) fields.set("host", String(headers[":authority"]));
  const url = `https://${headers[":authority"] ?? "localhost"}${headers[":path"] ?? "/"}`;
  const hasBody = method !== "GET" && method !== "HEAD";
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
        // Read as the route reads (pull), so HTTP/2's flow control holds back a client that sends faster.
        start(controller) {
          stream.pause();
          stream.on("data", (chunk: Buffer) => {
            controller.enqueue(new Uint8Array(chunk));
            if ((controller.desiredSize ?? 0) <= 0) stream.pause();
          });
          stream.once("end", () => controller.close());
          stream.once("error", (error) => controller.error(error));
        },
        pull() {
          stream.resume();
        },
        cancel() {
          stream.close(http2.constants.NGHTTP2_CANCEL);
        },
      })
    : null;
  return new Request(url, { method, headers: fields, body, signal, ...(body && { duplex: "half" }) } as RequestInit);
}
