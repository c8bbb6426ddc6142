/**
 * kubectl's side of a port-forward session for the wire tests: a real spdy-transport client
 * connection over any byte stream (a loopback socket, or a WebSocket tunnel's messages). Each
 * forwarded connection opens its error stream and waits for the reply, half-closes it and reads it
 * to its end, then opens its data stream, as client-go's portforward.go handleConnection does.
 */
import { connect } from "node:net";
import type { Duplex } from "node:stream";
// @ts-expect-error spdy-transport ships no types
import transport from "spdy-transport";

/** The few calls made on a spdy-transport client stream. */
export interface ClientStream extends Duplex {
  id: number;
}

/** A stream the client opened: `replied` false when the server reset it instead of answering. */
export interface Opened {
  stream: ClientStream;
  replied: boolean;
}

/** One forwarded connection: its streams, and all each brought until its end (or reset). */
export interface Forwarded {
  data: ClientStream;
  error: ClientStream;
  dataText: Promise<string>;
  errorText: Promise<string>;
}

/** Everything `stream` carries until it ends or is reset. */
export function readAll(stream: Duplex): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
    stream.once("end", () => resolve(text));
    stream.once("close", () => resolve(text));
  });
}

export class PortForwardClient {
  private readonly connection: {
    request(uri: object, callback: (error: Error | null, stream: ClientStream) => void): void;
    on(event: string, handler: () => void): void;
  };

  constructor(readonly socket: Duplex) {
    this.connection = transport.connection.create(socket, { protocol: "spdy", isServer: false });
    (this.connection as unknown as { start(version: number): void }).start(3);
    this.connection.on("error", () => {});
  }

  /** A client on a fresh loopback connection to `port`. */
  static async dial(port: number): Promise<PortForwardClient> {
    const socket = connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    return new PortForwardClient(socket);
  }

  /** Opens a stream with `headers`; resolves once the server answered it or reset it. */
  async open(headers: Record<string, string>): Promise<Opened> {
    const stream = await new Promise<ClientStream>((resolve, reject) => {
      this.connection.request({ method: "POST", path: "/", headers }, (error, opened) => (error ? reject(error) : resolve(opened)));
    });
    stream.on("error", () => {});
    const replied = await new Promise<boolean>((resolve) => {
      stream.once("response", () => resolve(true));
      stream.once("close", () => resolve(false));
    });
    return { stream, replied };
  }

  /** kubectl's handleConnection up to the copying: the error stream (half-closed, read), then the data stream. */
  async forward(port: number, requestId: string): Promise<Forwarded> {
    const headers = { streamtype: "error", port: String(port), requestid: requestId };
    const error = (await this.open(headers)).stream;
    error.end();
    const errorText = readAll(error);
    const data = (await this.open({ ...headers, streamtype: "data" })).stream;
    return { data, error, dataText: readAll(data), errorText };
  }

  /** One request and its whole answer: writes `request` on a new pair's data stream and reads both streams to their ends. */
  async exchange(port: number, requestId: string, request: string): Promise<{ data: string; error: string }> {
    const pair = await this.forward(port, requestId);
    pair.data.write(request);
    return { data: await pair.dataText, error: await pair.errorText };
  }

  close(): void {
    this.socket.destroy();
  }
}
