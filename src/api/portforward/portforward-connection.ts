/**
 * One forwarded connection of a port-forward session: a client's data and error stream pair joined
 * to a TCP connection to the pod's port, as the kubelet's httpStreamHandler.portForward (SPDY) or
 * websocketStreamHandler.portForward (a WebSocket's channel pair) and its runtime's PortForward do.
 * Bytes are copied both ways with back-pressure (pipe), and each side's end is passed on (the
 * client's end of its data stream half-closes the pod's socket). When the pod closes, the data
 * stream ends, then the error stream: kubectl closes its local connection only once it has read the
 * error stream's end. A failure (the dial, a reset mid-way) is written on the error stream first, in
 * the kubelet's words, which kubectl prints as
 * `an error occurred forwarding 8080 -> 80: error forwarding port 80 to pod ID, uid : ...`.
 */
import type { Duplex, Writable } from "node:stream";
import type { Clock } from "../../clock.ts";
import { dialErrorMessage, dialPod, transferErrorMessage, type PodAddress } from "./portforward-dial.ts";
import type { TcpDuplex } from "../streaming/tcp-duplex.ts";

/** Where the pod of a session is, as its connections need it. */
export interface ForwardTarget {
  /** Where the pod's `port` is dialled (Runtime.portForwardAddress for the pod's sandbox); may throw. */
  address(port: number): PodAddress;
  /** The pod as the kubelet's messages name it: its sandbox id (the kubelet's streaming server knows no more). */
  sandboxId: string;
  clock: Clock;
}

export class ForwardedConnection {
  /** Settles once the connection is over: the pod's socket closed or never made, both streams ended. */
  readonly done: Promise<void>;
  private settle: () => void = () => {};
  private socket: TcpDuplex | undefined;
  private over = false;

  constructor(
    private readonly data: Duplex,
    private readonly error: Writable,
    private readonly port: number,
    private readonly target: ForwardTarget,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    // Closed before we ended it: the client reset it (kubectl does once it has read the pod's end).
    data.once("close", () => this.finish());
    void this.connect();
  }

  /** Whether the connection is over (its streams ended, the pod's socket closed or never made). */
  get isOver(): boolean {
    return this.over;
  }

  /** The session is over: the pod's socket is closed now, with nothing said on the streams. */
  cut(): void {
    this.finish();
  }

  private async connect(): Promise<void> {
    let address: PodAddress;
    try {
      address = this.target.address(this.port);
    } catch (error) {
      return this.fail(error instanceof Error ? error.message : String(error));
    }
    let socket: TcpDuplex;
    try {
      socket = await dialPod(address, this.target.clock);
    } catch (error) {
      return this.fail(dialErrorMessage(address, error));
    }
    if (this.over) return void socket.destroy();
    this.socket = socket;
    socket.on("error", (error) => this.fail(transferErrorMessage(socket, error)));
    // The pod's FIN, once every byte before it is on the data stream: the data stream ends (pipe),
    // then the error stream. kubectl resets the data stream at that point, so the pod's side is not
    // kept half-open for more of the client's bytes.
    socket.once("end", () => this.finish());
    socket.once("close", () => this.finish());
    socket.pipe(this.data);
    this.data.pipe(socket);
  }

  /** Says why on the error stream, as the kubelet does for an error from its runtime, and ends the connection. */
  fail(message: string): void {
    if (this.over) return;
    this.error.write(`error forwarding port ${this.port} to pod ${this.target.sandboxId}, uid : ${message}`);
    this.finish();
  }

  private finish(): void {
    if (this.over) return;
    this.over = true;
    this.data.unpipe();
    this.socket?.destroy();
    this.data.end();
    this.error.end();
    this.settle();
  }
}
