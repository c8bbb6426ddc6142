/**
 * One channel of a channel-protocol WebSocket (ws-channels.ts) as a Node Duplex, so what copies
 * streams (a port-forward's ForwardedConnection) can copy to and from it: each write is one message
 * on the channel, and a write that meets the socket's back-pressure completes only once the socket
 * drained, so whoever pipes into it pauses; the client's messages for the channel are its readable
 * side. Ending it says nothing to the client: the v4 protocols have no message for a channel's end.
 */
import { Duplex } from "node:stream";

/** Sends `payload` as one message on `channel`; false when the socket reports back-pressure (a drain follows). */
export type ChannelSend = (channel: number, payload: Uint8Array) => boolean;

export class WebSocketChannel extends Duplex {
  /** The write the socket has not drained yet. */
  private waiting: (() => void) | undefined;

  constructor(
    readonly channel: number,
    private readonly send: ChannelSend,
  ) {
    super();
  }

  /** A client message's payload for this channel. Copied: the server's buffer is not ours to keep. */
  received(payload: Uint8Array): void {
    if (payload.length > 0) this.push(Buffer.from(payload));
  }

  /** The socket took what it had queued: a write held for it completes. */
  drained(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  // The client cannot be paused (a WebSocket has no read side to stop): what it sends is buffered
  // here, and the owner bounds it (readableLength).
  override _read(): void {}

  override _write(chunk: Buffer, _encoding: string, done: (error?: Error | null) => void): void {
    if (this.send(this.channel, chunk)) return done();
    this.waiting = done;
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.waiting = undefined;
    done(error);
  }
}
