/**
 * One hijacked engine request (`POST /exec/ID/start`, `POST /containers/ID/attach`) on a connection
 * of our own: the request written by hand with `Upgrade: tcp`, the answer's head read, then the
 * stream both ways. docker-modem's hijack rides node:http's upgrade, which under Bun does not
 * deliver what follows the head. Bun.connect, not node:net: stdin ends with a half-close of the
 * connection, and under Bun 1.3.9 node:net's end() closes both ways, so the engine drops the stream
 * and the output after the EOF is lost. Bun's own socket half-closes with `shutdown()` (no
 * argument: SHUT_WR, seen with strace; `shutdown(true)` is SHUT_RD despite its documentation).
 * Without a TTY the engine multiplexes stdout and stderr in frames (docker-frames.ts); with one,
 * the stream is the terminal's bytes.
 */
import { parseFrames } from "./docker-frames.ts";

/** Largest response head the engine may send before the stream starts. */
const MAX_HEAD_BYTES = 16 * 1024;

/** Where the engine listens, as docker-modem holds it. */
export interface Endpoint {
  /** docker-modem's: the socket's path, or (no DOCKER_HOST) a function finding the default one. */
  socketPath?: string | (() => string | Promise<string>);
  host?: string;
  port?: number | string;
  protocol?: string;
}

/** What goes over the stream, and where its output goes. */
export interface HijackOptions {
  /** Raw terminal bytes (tty), else multiplexed frames. */
  tty: boolean;
  /** Whether `write` sends anything: without stdin the engine reads none. */
  stdin: boolean;
  /** As ExecStreamRequest.output: a returned promise pauses the engine's stream until it settles. */
  output(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void>;
}

/** The engine's endpoint of `docker`'s modem; refuses one reached over TLS (no hijack by hand there). */
export function plainEndpoint(docker: object, what: string): Endpoint {
  const modem = (docker as { modem: Endpoint }).modem;
  if ((modem.protocol ?? "http") !== "http") throw new Error(`${what}: an engine reached over ${modem.protocol} is not supported for interactive streams`);
  return modem;
}

/** One hijacked request: resolves once the engine answered 101 or 200, with the stream open. */
export class HijackedStream {
  /** Settles once the engine closed the stream and every byte received was handed to `output`. */
  readonly closed: Promise<void>;
  private socket!: Bun.Socket<undefined>;
  private head: Buffer | undefined = Buffer.alloc(0);
  private rest: Buffer = Buffer.alloc(0);
  private pending: Uint8Array[] = [];
  private writeClosed = false;
  private outputChain: Promise<void> = Promise.resolve();
  private markClosed!: () => void;
  private started!: { resolve: () => void; reject: (error: Error) => void };

  private constructor(private readonly options: HijackOptions) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
  }

  /** POSTs `path` (with a JSON `body`, if any) asking to upgrade, and reads the answer's head. */
  static async open(endpoint: Endpoint, path: string, body: string, options: HijackOptions): Promise<HijackedStream> {
    const stream = new HijackedStream(options);
    const started = new Promise<void>((resolve, reject) => (stream.started = { resolve, reject }));
    const handlers: Bun.SocketHandler<undefined> = {
      data: (_socket, chunk) => stream.receive(Buffer.from(chunk)),
      drain: () => stream.flush(),
      close: () => stream.finish(new Error("the engine closed the connection before answering")),
      error: (_socket, error) => stream.finish(error),
    };
    const socketPath = typeof endpoint.socketPath === "function" ? await endpoint.socketPath() : endpoint.socketPath;
    const connection = socketPath
      ? { unix: socketPath, allowHalfOpen: true, socket: handlers }
      : { hostname: endpoint.host ?? "localhost", port: Number(endpoint.port ?? 2375), allowHalfOpen: true, socket: handlers };
    stream.socket = await Bun.connect(connection as Bun.UnixSocketOptions<undefined>);
    stream.socket.write(
      `POST ${path} HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n` +
        `Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await started;
    return stream;
  }

  write(data: Uint8Array): void {
    if (this.writeClosed || !this.options.stdin) return;
    this.pending.push(data);
    this.flush();
  }

  /** Half-closes once every queued stdin byte is written: the engine sees the end of stdin. */
  closeWrite(): void {
    if (this.writeClosed) return;
    this.writeClosed = true;
    this.flush();
  }

  close(): void {
    this.socket.end();
  }

  private flush(): void {
    while (this.pending.length > 0) {
      const next = this.pending[0] as Uint8Array;
      const written = this.socket.write(next);
      if (written < 0) return;
      if (written < next.length) {
        this.pending[0] = next.subarray(written);
        return;
      }
      this.pending.shift();
    }
    if (this.writeClosed) this.socket.shutdown();
  }

  private receive(chunk: Buffer): void {
    if (this.head) return this.readHead(chunk);
    this.deliver(chunk);
  }

  private readHead(chunk: Buffer): void {
    const head = Buffer.concat([this.head as Buffer, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) {
      if (head.length > MAX_HEAD_BYTES) this.finish(new Error("the engine's answer has no end of headers"));
      else this.head = head;
      return;
    }
    this.head = undefined;
    const statusLine = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
    const status = Number(statusLine.split(" ")[1]);
    if (status !== 101 && status !== 200) {
      this.finish(new EngineAnswerError(status, statusLine, head.subarray(end + 4).toString("utf8").trim()));
      return;
    }
    this.started.resolve();
    if (end + 4 < head.length) this.deliver(head.subarray(end + 4));
  }

  private deliver(chunk: Buffer): void {
    if (this.options.tty) return this.emit("stdout", chunk);
    const { frames, rest } = parseFrames(this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk);
    this.rest = rest;
    for (const frame of frames) this.emit(frame.stream === 2 ? "stderr" : "stdout", frame.payload);
  }

  /** Hands output on in order; while the caller holds it back, the engine's stream is paused. */
  private emit(stream: "stdout" | "stderr", data: Buffer): void {
    this.outputChain = this.outputChain.then(() => {
      const held = this.options.output(stream, new Uint8Array(data));
      if (!held) return;
      this.socket.pause();
      return held.then(
        () => this.socket.resume(),
        () => this.socket.resume(),
      );
    });
  }

  private finish(error: Error): void {
    this.started.reject(error);
    // Every byte received is handed on before the end is reported.
    void this.outputChain.then(() => this.markClosed());
  }
}

/** The engine refused the request: its status code (409 for a container not running) and its message. */
export class EngineAnswerError extends Error {
  override readonly name = "EngineAnswerError";
  constructor(
    readonly status: number,
    statusLine: string,
    body: string,
  ) {
    super(`the engine answered ${statusLine}: ${body}`);
  }
}
