/**
 * SPDY carried in a WebSocket (kubectl 1.31+'s port-forward: subprotocol `SPDY/3.1+portforward.k8s.io`,
 * client-go's tools/portforward tunneling_connection.go): the bytes of the binary messages, in order,
 * are one SPDY connection's byte stream each way, and a message boundary means nothing. The API
 * server translates such a tunnel into a SPDY upgrade to the kubelet (its streamtunnel.go); here the
 * SPDY session runs on the tunnel itself, exactly as on a SPDY upgrade (spdy.ts).
 */
import { Duplex } from "node:stream";
import type { Clock } from "../../clock.ts";
import type { ApiSocket, SpdySession, WebSocketSession } from "../http/http.ts";
import { acceptSpdy } from "../http/spdy.ts";

/** What client-go puts before a SPDY stream protocol to offer it tunnelled. */
export const SPDY_TUNNEL_PREFIX = "SPDY/3.1+";

/** A WebSocket close code: the tunnel ended normally (client-go reads it as the connection's EOF). */
const NORMAL_CLOSURE = 1000;

/** A SpdySession served over a WebSocket; its subprotocol is the session's, prefixed. */
export class SpdyOverWebSocket implements WebSocketSession {
  readonly protocol: string;
  private tunnel: WebSocketTunnel | undefined;

  constructor(
    private readonly session: SpdySession,
    private readonly clock: Clock,
  ) {
    this.protocol = SPDY_TUNNEL_PREFIX + session.protocol;
  }

  open(socket: ApiSocket): void {
    this.tunnel = new WebSocketTunnel(socket);
    this.session.open(acceptSpdy(this.tunnel, this.clock));
  }

  message(_socket: ApiSocket, data: Uint8Array): void {
    // Copied: the SPDY parser may hold on to it past this call.
    this.tunnel?.push(Buffer.from(data));
  }

  close(): void {
    this.tunnel?.gone();
  }

  drain(): void {
    this.tunnel?.drained();
  }
}

/**
 * The WebSocket as the byte stream spdy-transport reads and writes: each write one binary message,
 * the next held back while the socket reports back-pressure. The client's messages are not paced:
 * a WebSocket cannot be paused, and SPDY's own window is left open (spdy.ts says why).
 */
export class WebSocketTunnel extends Duplex {
  private waiting: (() => void) | undefined;
  private socketClosed = false;

  constructor(private readonly socket: Pick<ApiSocket, "send" | "close">) {
    super();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: string, done: (error?: Error | null) => void): void {
    if (this.socketClosed || this.socket.send(chunk) > 0) return done();
    this.waiting = done;
  }

  /** The socket took what it had queued: the next write may go. */
  drained(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  /** The client closed the WebSocket (or it was cut): the byte stream ends both ways. */
  gone(): void {
    this.socketClosed = true;
    this.push(null);
    this.destroy();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.closeSocket();
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.closeSocket();
    done(error);
  }

  private closeSocket(): void {
    if (this.socketClosed) return;
    this.socketClosed = true;
    this.socket.close(NORMAL_CLOSURE);
  }
}
