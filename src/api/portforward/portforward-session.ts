/**
 * One `kubectl port-forward` session on a SPDY connection (`portforward.k8s.io`, served as the
 * kubelet's portforward/httpstream.go serves it), whether the connection is a SPDY upgrade
 * (kubectl 1.27 to 1.30) or SPDY tunnelled in a WebSocket (1.31+, spdy-tunnel.ts). For each local
 * connection it accepts, kubectl opens an error stream and a data stream, both carrying `port`
 * (the pod's port) and `requestID` (the same for the pair); once both are there and answered, the
 * pair is forwarded (portforward-connection.ts). A stream with a missing or bad header is reset; a
 * pair still incomplete after STREAM_CREATION_TIMEOUT_MS is told so on its error stream. The session
 * lasts as long as the connection; when it goes, every forwarded connection is cut and `onEnd` told.
 */
import { ForwardedConnection, type ForwardTarget } from "./portforward-connection.ts";
import type { SpdySession } from "../http/http.ts";
import { STREAM_CREATION_TIMEOUT_MS, type SpdyConnection, type SpdyStream } from "../http/spdy.ts";

/** The one port-forward stream protocol there is (`X-Stream-Protocol-Version`). */
export const PORT_FORWARD_PROTOCOL = "portforward.k8s.io";

/**
 * Connections forwarded at once on one session, past which a new pair is refused on its error
 * stream: each holds a socket to the pod, and one kubectl must not take every descriptor the agent has.
 */
export const MAX_CONNECTIONS_PER_SESSION = 256;

export interface PortForwardSessionOptions extends ForwardTarget {
  /** Called once, when the session is over (the connection closed). */
  onEnd(): void;
  /** Connections forwarded at once; default MAX_CONNECTIONS_PER_SESSION. */
  maxConnections?: number;
}

type StreamType = "data" | "error";

/** The streams of one forwarded connection, as they arrive. */
interface StreamPair {
  requestId: string;
  port: number;
  data?: SpdyStream;
  error?: SpdyStream;
  /** The streams whose SYN_REPLY is written: only those may carry frames. */
  replied: Set<SpdyStream>;
  cancelTimeout: () => void;
}

/**
 * Why the kubelet rejects a stream with these headers, or undefined when it takes it: `port` must be
 * a port number above 0, `streamType` must be `data` or `error`.
 */
export function rejectedStream(headers: Record<string, string>): string | undefined {
  const port = headers["port"];
  if (!port) return `"port" header is required`;
  if (!/^\d+$/.test(port) || Number(port) > 0xffff) return `unable to parse "${port}" as a port`;
  if (Number(port) < 1) return `port "${port}" must be > 0`;
  const type = headers["streamtype"];
  if (!type) return `"streamType" header is required`;
  if (type !== "data" && type !== "error") return `invalid stream type "${type}"`;
  return undefined;
}

/**
 * The pair a stream belongs to: its `requestID`; from a client too old to send one, the kubelet's
 * guess from the stream ids (an error stream and the data stream opened right after it).
 */
export function requestIdOf(stream: Pick<SpdyStream, "id" | "headers">, type: StreamType): string {
  const given = stream.headers["requestid"];
  if (given) return given;
  return String(type === "error" ? stream.id : stream.id - 2);
}

export class PortForwardSession implements SpdySession {
  readonly protocol = PORT_FORWARD_PROTOCOL;
  private readonly pending = new Map<string, StreamPair>();
  private readonly forwarded = new Set<ForwardedConnection>();
  private ended = false;

  constructor(private readonly options: PortForwardSessionOptions) {}

  /** Connections being forwarded now. */
  get connections(): number {
    return this.forwarded.size;
  }

  open(connection: SpdyConnection): void {
    connection.onClose(() => this.end());
    connection.onStream((stream) => this.received(stream));
  }

  private received(stream: SpdyStream): void {
    // A reset, or a stream past GOAWAY, is an error event: unheard, it would end the process.
    stream.on("error", () => stream.destroy());
    if (this.ended) return void stream.destroy();
    // Rejected as the kubelet rejects it: reset, with no reply.
    if (rejectedStream(stream.headers)) return void stream.destroy();
    const type = stream.headers["streamtype"] as StreamType;
    const requestId = requestIdOf(stream, type);
    const pair = this.pending.get(requestId) ?? this.newPair(requestId, Number(stream.headers["port"]));
    // kubectl writes nothing on the error stream and ends its side at once: read, so that end is seen.
    if (type === "error") stream.resume();
    if (pair[type]) {
      stream.respond(200, {});
      stream.resume();
      stream.end();
      return this.printError(pair, `error processing stream for request ${requestId}: ${type} stream already assigned`);
    }
    pair[type] = stream;
    // Forwarded once both replies are written: the pod's first bytes must not overtake them.
    stream.respond(200, {}, (error) => {
      if (error) return;
      pair.replied.add(stream);
      if (pair.data && pair.error && pair.replied.size === 2) this.forward(pair);
    });
  }

  private newPair(requestId: string, port: number): StreamPair {
    const pair: StreamPair = { requestId, port, replied: new Set(), cancelTimeout: () => {} };
    pair.cancelTimeout = this.options.clock.setTimeout(() => this.timedOut(pair), STREAM_CREATION_TIMEOUT_MS);
    this.pending.set(requestId, pair);
    return pair;
  }

  private forward(pair: StreamPair): void {
    pair.cancelTimeout();
    this.pending.delete(pair.requestId);
    const limit = this.options.maxConnections ?? MAX_CONNECTIONS_PER_SESSION;
    if (this.forwarded.size >= limit) {
      this.printError(pair, `too many connections forwarded at once on this session (limit ${limit})`);
      return this.endStreams(pair);
    }
    const connection = new ForwardedConnection(pair.data!, pair.error!, pair.port, this.options);
    this.forwarded.add(connection);
    void connection.done.then(() => this.forwarded.delete(connection));
  }

  private timedOut(pair: StreamPair): void {
    this.pending.delete(pair.requestId);
    this.printError(pair, `(request=${pair.requestId}) timed out waiting for streams`);
    this.endStreams(pair);
  }

  private printError(pair: StreamPair, message: string): void {
    pair.error?.write(message);
  }

  private endStreams(pair: StreamPair): void {
    pair.error?.end();
    pair.data?.end();
    pair.data?.resume();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const pair of this.pending.values()) pair.cancelTimeout();
    this.pending.clear();
    for (const connection of this.forwarded) connection.cut();
    this.forwarded.clear();
    this.options.onEnd();
  }
}
