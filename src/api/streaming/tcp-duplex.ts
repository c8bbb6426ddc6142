/**
 * An outgoing TCP connection as a Node Duplex, on Bun.connect underneath: Bun 1.3's node:net
 * `end()` closes the connection both ways (oven-sh/bun#31383), dropping what the peer still sends
 * after our FIN, where a forwarded connection needs a real half-close (`shutdown(SHUT_WR)`). Reads
 * are paced by the consumer (pause/resume), writes by the socket (a partial write waits for drain).
 */
import type { Socket } from "bun";
import { Duplex } from "node:stream";

/** A connected socket: bytes both ways, `end()` a write-side half-close, 'end' the peer's FIN. */
export class TcpDuplex extends Duplex {
  private socket: Socket<undefined> | undefined;
  private unsent: { data: Uint8Array; done: (error?: Error | null) => void } | undefined;

  private constructor() {
    super();
  }

  /** Connects to `host:port`; rejects with the connect error (its `code` is the errno: ECONNREFUSED...). */
  static async connect(host: string, port: number): Promise<TcpDuplex> {
    const duplex = new TcpDuplex();
    duplex.socket = await Bun.connect({
      hostname: host,
      port,
      // Ours to end: a FIN from the peer ends only what we read.
      allowHalfOpen: true,
      socket: {
        data: (_socket, data) => duplex.received(data),
        drain: () => duplex.flush(),
        end: () => void duplex.push(null),
        error: (_socket, error) => void duplex.destroy(error),
        close: (_socket, error) => duplex.socketClosed(error),
        connectError: () => {},
      },
    });
    const { localAddress, localPort, remoteAddress, remotePort } = duplex.socket;
    duplex.connectedEnds = { localAddress, localPort, remoteAddress, remotePort };
    return duplex;
  }

  private connectedEnds = { localAddress: "", localPort: 0, remoteAddress: "", remotePort: 0 };

  /** Both ends' addresses as they were once connected: a socket that failed no longer knows them. */
  get ends(): { localAddress: string; localPort: number; remoteAddress: string; remotePort: number } {
    return this.connectedEnds;
  }

  override _read(): void {
    this.socket?.resume();
  }

  override _write(chunk: Buffer, _encoding: string, done: (error?: Error | null) => void): void {
    this.unsent = { data: chunk, done };
    this.flush();
  }

  override _final(done: (error?: Error | null) => void): void {
    // No argument: in Bun 1.3 that is shutdown(SHUT_WR), the peer's answer still arriving;
    // `shutdown(true)`, documented as the write-side close, stops the reading instead.
    if (this.socket && this.socket.readyState > 0) this.socket.shutdown();
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.socket?.end();
    done(error);
  }

  private received(data: Buffer): void {
    if (!this.push(data)) this.socket?.pause();
  }

  /** Writes what is left of the pending chunk; its callback runs once the socket took all of it. */
  private flush(): void {
    const unsent = this.unsent;
    if (!unsent || !this.socket) return;
    const written = this.socket.write(unsent.data);
    if (written < 0) return void this.destroy(Object.assign(new Error("write to a closed socket"), { code: "EPIPE", syscall: "write" }));
    if (written < unsent.data.length) {
      unsent.data = unsent.data.subarray(written);
      return;
    }
    this.unsent = undefined;
    unsent.done();
  }

  /** The socket is gone: an error destroys at once; a clean close ends both sides, so 'close' follows the last byte read. */
  private socketClosed(error?: Error): void {
    if (error) return void this.destroy(error);
    // Bytes still waiting for the socket can never be delivered.
    if (this.unsent) return void this.destroy(Object.assign(new Error("the peer closed the connection"), { code: "ECONNRESET", syscall: "write" }));
    this.push(null);
    if (!this.writableEnded) this.end();
  }
}
