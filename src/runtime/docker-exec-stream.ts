/**
 * Interactive exec for the docker runtime (`kubectl exec`): the exec is created through dockerode,
 * then started on a connection of our own to the engine, hijacked by hand (`Upgrade: tcp`), since
 * docker-modem's hijack rides node:http's upgrade under Bun. Bun.connect, not node:net: the
 * command's stdin ends with a half-close of the connection, and under Bun 1.3.9 node:net's end()
 * closes both ways, so the engine drops the stream and the command's output after its EOF is lost.
 * Bun's own socket half-closes with `shutdown()` (no argument: SHUT_WR, seen with strace;
 * `shutdown(true)` is SHUT_RD despite its documentation). Without a TTY the engine multiplexes
 * stdout and stderr in frames (docker-frames.ts); with one, the stream is the terminal's bytes.
 */
import type Dockerode from "dockerode";
import type { Clock } from "../clock.ts";
import { parseFrames } from "./docker-frames.ts";
import { killExec } from "./docker-exec.ts";
import type { ExecSession, ExecStreamRequest, TerminalSize } from "./runtime.ts";

/** Largest response head the engine may send before the stream starts. */
const MAX_HEAD_BYTES = 16 * 1024;

interface Endpoint {
  /** docker-modem's: the socket's path, or (no DOCKER_HOST) a function finding the default one. */
  socketPath?: string | (() => string | Promise<string>);
  host?: string;
  port?: number | string;
  protocol?: string;
}

/** How often, and how far apart, the engine is asked for an exit code it has not recorded yet. */
const EXIT_CODE_TRIES = 10;
const EXIT_CODE_RETRY_MS = 50;

export async function startDockerExec(docker: Dockerode, containerId: string, request: ExecStreamRequest, clock: Clock): Promise<ExecSession> {
  if (request.command.length === 0) throw new Error("exec: command is empty");
  const modem = (docker as unknown as { modem: Endpoint }).modem;
  if ((modem.protocol ?? "http") !== "http") throw new Error(`exec: an engine reached over ${modem.protocol} is not supported for interactive exec`);
  const exec = await docker.getContainer(containerId).exec({
    Cmd: request.command,
    AttachStdin: request.stdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: request.tty,
  });
  const stream = await HijackedStream.open(modem, exec.id, request);
  const resize = async (size: TerminalSize): Promise<void> => {
    if (request.tty && size.width > 0 && size.height > 0) await exec.resize({ h: size.height, w: size.width }).catch(() => undefined);
  };
  // Engine API 1.41 takes no size at start: the command may run a moment on a 0x0 terminal.
  if (request.size) await resize(request.size);
  const kill = () => void killExec(exec).finally(() => stream.close());
  if (request.signal?.aborted) kill();
  request.signal?.addEventListener("abort", kill, { once: true });
  const exited = stream.closed.then(async () => {
    request.signal?.removeEventListener("abort", kill);
    // The stream can end a moment before the engine records the exit code.
    for (let attempt = 1; ; attempt++) {
      const info = await exec.inspect().catch(() => undefined);
      if (info && !info.Running && typeof info.ExitCode === "number") return info.ExitCode;
      if (!info || attempt >= EXIT_CODE_TRIES) return 137;
      await new Promise<void>((resolve) => clock.setTimeout(resolve, EXIT_CODE_RETRY_MS));
    }
  });
  return {
    write: (data) => stream.write(data),
    closeStdin: () => stream.closeWrite(),
    resize,
    exited,
  };
}

/** One hijacked `POST /exec/ID/start`: the head parsed, then frames (or raw TTY bytes) to `output`. */
class HijackedStream {
  readonly closed: Promise<void>;
  private socket!: Bun.Socket<undefined>;
  private head: Buffer | undefined = Buffer.alloc(0);
  private rest: Buffer = Buffer.alloc(0);
  private pending: Uint8Array[] = [];
  private writeClosed = false;
  private outputChain: Promise<void> = Promise.resolve();
  private markClosed!: () => void;
  private started!: { resolve: () => void; reject: (error: Error) => void };

  private constructor(private readonly request: ExecStreamRequest) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
  }

  static async open(endpoint: Endpoint, execId: string, request: ExecStreamRequest): Promise<HijackedStream> {
    const stream = new HijackedStream(request);
    const started = new Promise<void>((resolve, reject) => (stream.started = { resolve, reject }));
    const handlers: Bun.SocketHandler<undefined> = {
      data: (_socket, chunk) => stream.receive(Buffer.from(chunk)),
      drain: () => stream.flush(),
      close: () => stream.finish(new Error("the engine closed the exec connection before answering")),
      error: (_socket, error) => stream.finish(error),
    };
    const socketPath = typeof endpoint.socketPath === "function" ? await endpoint.socketPath() : endpoint.socketPath;
    const connection = socketPath
      ? { unix: socketPath, allowHalfOpen: true, socket: handlers }
      : { hostname: endpoint.host ?? "localhost", port: Number(endpoint.port ?? 2375), allowHalfOpen: true, socket: handlers };
    stream.socket = await Bun.connect(connection as Bun.UnixSocketOptions<undefined>);
    const body = JSON.stringify({ Detach: false, Tty: request.tty });
    stream.socket.write(
      `POST /exec/${execId}/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n` +
        `Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await started;
    return stream;
  }

  write(data: Uint8Array): void {
    if (this.writeClosed || !this.request.stdin) return;
    this.pending.push(data);
    this.flush();
  }

  /** Half-closes once every queued stdin byte is written: the engine closes the command's stdin. */
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
      if (head.length > MAX_HEAD_BYTES) this.finish(new Error("the engine's answer to exec start has no end of headers"));
      else this.head = head;
      return;
    }
    this.head = undefined;
    const statusLine = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
    const status = Number(statusLine.split(" ")[1]);
    if (status !== 101 && status !== 200) {
      this.finish(new Error(`exec start: the engine answered ${statusLine}: ${head.subarray(end + 4).toString("utf8").trim()}`));
      return;
    }
    this.started.resolve();
    if (end + 4 < head.length) this.deliver(head.subarray(end + 4));
  }

  private deliver(chunk: Buffer): void {
    if (this.request.tty) return this.emit("stdout", chunk);
    const { frames, rest } = parseFrames(this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk);
    this.rest = rest;
    for (const frame of frames) this.emit(frame.stream === 2 ? "stderr" : "stdout", frame.payload);
  }

  /** Hands output on in order; while the caller holds it back, the engine's stream is paused. */
  private emit(stream: "stdout" | "stderr", data: Buffer): void {
    this.outputChain = this.outputChain.then(() => {
      const held = this.request.output(stream, new Uint8Array(data));
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
