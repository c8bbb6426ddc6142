/**
 * One port-forward over the WebSocket channel protocol (`v4.channel.k8s.io`, its base64 variant, or
 * no subprotocol at all), as the kubelet's portforward/websocket.go serves it to the client
 * libraries. The request fixed the ports; port i has two channels, data 2i and error 2i+1, and the
 * first message on each is the port, 2 bytes little-endian. Each port's connection to the pod is
 * dialled at once and is the only one it gets for the WebSocket's life (ForwardedConnection: the
 * copying both ways, and a failure in the kubelet's words on the error channel). A connection the
 * pod closes ends with nothing said (the v4 protocols have no message for a channel's end): once
 * every port's connection is over, the WebSocket is closed, which is how a client learns it. The
 * client leaving cuts every connection.
 */
import { finished } from "node:stream";
import { ForwardedConnection, type ForwardTarget } from "./portforward-connection.ts";
import { channelCodecOf, type PortForwardChannelProtocol } from "./portforward-ws-options.ts";
import type { ApiSocket, WebSocketSession } from "../http/http.ts";
import { WebSocketChannel, type ChannelSend } from "../streaming/ws-channel-stream.ts";
import { base64ChannelFrame, channelFrame, decodeChannelMessage, type ChannelCodec } from "../streaming/ws-channels.ts";

/**
 * Bytes from the client that its pods' ports have not read yet, per WebSocket, past which the
 * connection holding the most of them is failed. The kubelet stops reading the whole WebSocket
 * instead; Bun's server WebSocket cannot stop reading, so this bounds what a client can make the
 * agent hold (at most maxPortForwardSessions times this). 16 MiB is many kernel socket buffers:
 * only a pod that stopped reading gets there.
 */
export const MAX_UNREAD_CLIENT_BYTES = 16 * 1024 * 1024;

/** A WebSocket close code: the session ended normally (every connection is over). */
const NORMAL_CLOSURE = 1000;

export interface PortForwardWebSocketOptions extends ForwardTarget {
  /** The ports, in the request's order: port i's channels are 2i and 2i+1 (portsToForward checked them). */
  ports: readonly number[];
  protocol: PortForwardChannelProtocol;
  /** Called once, when the session is over (every connection, or the client, gone). */
  onEnd(): void;
  /** Default MAX_UNREAD_CLIENT_BYTES. */
  maxUnreadBytes?: number;
}

/** One forwarded port: its channels and its one connection. */
interface ForwardedPort {
  data: WebSocketChannel;
  error: WebSocketChannel;
  connection: ForwardedConnection;
  /** The connection is over and what it wrote has reached the socket. */
  flushed: boolean;
}

export class PortForwardWebSocketSession implements WebSocketSession {
  readonly protocol: string;
  private readonly codec: ChannelCodec;
  private readonly forwarded: ForwardedPort[] = [];
  private ended = false;

  constructor(private readonly options: PortForwardWebSocketOptions) {
    this.protocol = options.protocol;
    this.codec = channelCodecOf(options.protocol);
  }

  /** Connections to the pod not over yet. */
  get connections(): number {
    return this.forwarded.filter((forwarded) => !forwarded.flushed).length;
  }

  open(socket: ApiSocket): void {
    const send: ChannelSend = (channel, payload) =>
      (this.codec === "binary" ? socket.send(channelFrame(channel, payload)) : socket.sendText(base64ChannelFrame(channel, payload))) > 0;
    const channels = this.options.ports.map((port, index) => {
      const data = this.channel(2 * index, send);
      const error = this.channel(2 * index + 1, send);
      // Before anything the pod sends: python's client refuses a first message that is not these 3 bytes.
      const portBytes = new Uint8Array([port & 0xff, port >> 8]);
      data.write(portBytes);
      error.write(portBytes);
      return { port, data, error };
    });
    for (const { port, data, error } of channels) {
      const forwarded: ForwardedPort = { data, error, connection: new ForwardedConnection(data, error, port, this.options), flushed: false };
      this.forwarded.push(forwarded);
      void forwarded.connection.done.then(() => this.connectionOver(socket, forwarded));
    }
  }

  message(_socket: ApiSocket, raw: Uint8Array): void {
    if (this.ended) return;
    const message = decodeChannelMessage(this.codec, raw);
    // Skipped as the kubelet skips them: empty or undecodable, on an error channel (the server's to
    // write), on a channel no port has, or for a connection that is over.
    if (!message || message.channel % 2 === 1) return;
    const forwarded = this.forwarded[message.channel / 2];
    if (!forwarded || forwarded.flushed || forwarded.connection.isOver) return;
    forwarded.data.received(message.payload);
    this.boundUnread();
  }

  close(): void {
    for (const forwarded of this.forwarded) {
      forwarded.connection.cut();
      forwarded.data.destroy();
      forwarded.error.destroy();
    }
    this.end();
  }

  drain(): void {
    for (const forwarded of this.forwarded) {
      forwarded.data.drained();
      forwarded.error.drained();
    }
  }

  private channel(number: number, send: ChannelSend): WebSocketChannel {
    const channel = new WebSocketChannel(number, send);
    // An error event unheard would end the process; the connection's own end covers the rest.
    channel.on("error", () => channel.destroy());
    return channel;
  }

  private boundUnread(): void {
    const limit = this.options.maxUnreadBytes ?? MAX_UNREAD_CLIENT_BYTES;
    let total = 0;
    let largest: ForwardedPort | undefined;
    for (const forwarded of this.forwarded) {
      if (forwarded.connection.isOver) continue;
      const unread = forwarded.data.readableLength;
      total += unread;
      if (!largest || unread > largest.data.readableLength) largest = forwarded;
    }
    if (total <= limit || !largest) return;
    largest.connection.fail(`the pod has not read ${largest.data.readableLength} bytes the client sent (limit ${limit} unread bytes per WebSocket)`);
  }

  /** Once what the connection wrote is on the socket, its channels go; after the last, the WebSocket. */
  private connectionOver(socket: ApiSocket, forwarded: ForwardedPort): void {
    let pending = 2;
    const flushed = () => {
      if (--pending > 0) return;
      forwarded.flushed = true;
      forwarded.data.destroy();
      forwarded.error.destroy();
      if (this.ended || !this.forwarded.every((each) => each.flushed)) return;
      socket.close(NORMAL_CLOSURE);
      this.end();
    };
    finished(forwarded.data, { readable: false }, flushed);
    finished(forwarded.error, { readable: false }, flushed);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.onEnd();
  }
}
