/**
 * One upgraded `kubectl exec`, whatever carries it (WebSocket here, SPDY in exec-spdy-session.ts):
 * the client's input to the runtime's ExecSession and its output back. The command starts when
 * the connection is ready; input that comes before it has started is held (bounded). A slow
 * client holds back the command's output (pipes and the engine's stream pause); a terminal cannot
 * pause, so past MAX_UNSENT_BYTES waiting for the client the session is ended. The client leaving
 * kills the command; the command ending sends its Status and closes.
 */
import type { Clock } from "../clock.ts";
import type { ExecSession, Runtime, TerminalSize } from "../runtime/runtime.ts";
import { CHANNEL, errorStatus, exitStatus, parseClientMessage, type ClientMessage, type ExecOptions, type ExecProtocol } from "./exec-protocol.ts";
import type { ApiSocket, WebSocketSession } from "./http.ts";
import { channelFrame } from "./ws-channels.ts";

/** Output queued for a client that stopped reading, past which a terminal session is ended. */
export const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/** Input held until the command has started. */
export const MAX_EARLY_INPUT_BYTES = 1024 * 1024;

/** WebSocket close codes: a normal end, and a server-side failure. */
const NORMAL_CLOSURE = 1000;
const INTERNAL_ERROR = 1011;

export interface ExecRunOptions {
  runtime: Pick<Runtime, "execStream">;
  containerId: string;
  options: ExecOptions;
  /** Called when the session is over (the command ended or the client left); maybe twice, so idempotent. */
  onEnd: () => void;
}

/** How a framing carries the command's side to the client. */
export interface ExecOutput {
  /** Sends one chunk of output; false when the client is behind (`drain` follows when it catches up). */
  send(stream: "stdout" | "stderr", data: Uint8Array): boolean;
  /** Sends the end as a v1 Status (JSON) and closes. */
  finish(status: string): void;
  /** Ends the connection at once: the server gave up on it. */
  abort(reason: string): void;
}

/** The command's side of a session, driven by a framing's `start`, input calls and `clientGone`. */
export class ExecRun {
  private readonly abortCommand = new AbortController();
  private exec: ExecSession | undefined;
  private early: Uint8Array[] = [];
  private earlyBytes = 0;
  private stdinClosed = false;
  private size: TerminalSize | undefined;
  private output: ExecOutput | undefined;
  private closed = false;
  private unsentBytes = 0;
  private drained: (() => void) | undefined;

  constructor(private readonly config: ExecRunOptions) {}

  start(output: ExecOutput): void {
    this.output = output;
    const { options } = this.config;
    this.config.runtime
      .execStream(this.config.containerId, {
        command: options.command,
        stdin: options.stdin,
        tty: options.tty,
        ...(this.size && { size: this.size }),
        output: (stream, data) => this.send(stream, data),
        signal: this.abortCommand.signal,
      })
      .then(
        (exec) => this.started(exec),
        (error: unknown) => this.finish(errorStatus(error instanceof Error ? error.message : String(error))),
      );
  }

  stdin(data: Uint8Array): void {
    if (!this.config.options.stdin || this.stdinClosed) return;
    if (this.exec) return this.exec.write(data);
    this.earlyBytes += data.length;
    if (this.earlyBytes <= MAX_EARLY_INPUT_BYTES) this.early.push(data.slice());
  }

  closeStdin(): void {
    if (this.stdinClosed) return;
    this.stdinClosed = true;
    this.exec?.closeStdin();
  }

  resize(size: TerminalSize): void {
    this.size = size;
    if (this.exec && this.config.options.tty) void this.exec.resize(size);
  }

  /** The client went away: the command is killed. */
  clientGone(): void {
    this.closed = true;
    this.abortCommand.abort();
    this.releaseOutput();
    this.config.onEnd();
  }

  /** The client caught up with the output sent. */
  drain(): void {
    this.unsentBytes = 0;
    this.releaseOutput();
  }

  private started(exec: ExecSession): void {
    this.exec = exec;
    for (const data of this.early) exec.write(data);
    this.early = [];
    if (this.size && this.config.options.tty) void exec.resize(this.size);
    if (this.stdinClosed) exec.closeStdin();
    exec.exited.then(
      (code) => this.finish(exitStatus(code)),
      (error: unknown) => this.finish(errorStatus(String(error))),
    );
  }

  private send(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void> {
    const wanted = stream === "stdout" ? this.config.options.stdout : this.config.options.stderr;
    if (!wanted || this.closed || !this.output) return;
    if (this.output.send(stream, data)) return;
    this.unsentBytes += data.length;
    if (this.unsentBytes > MAX_UNSENT_BYTES) {
      // Only a terminal gets here (everything else waits below): it cannot be paused.
      this.abortCommand.abort();
      this.output.abort(`the client read no output while ${MAX_UNSENT_BYTES} bytes waited`);
      return;
    }
    return new Promise<void>((resolve) => {
      const previous = this.drained;
      this.drained = () => {
        previous?.();
        resolve();
      };
    });
  }

  private releaseOutput(): void {
    const release = this.drained;
    this.drained = undefined;
    release?.();
  }

  private finish(status: string): void {
    if (this.closed || !this.output) return;
    this.output.finish(status);
    this.config.onEnd();
  }
}

/**
 * How long after the WebSocket opens the command starts, unless the client speaks first. kubectl
 * 1.30 to 1.33 read the connection before creating their streams, and discard a message that comes
 * first ("Unknown stream id", kubernetes#131189, fixed in client-go by kubernetes#131203): a quick
 * command's output and exit code were lost. The API server is never that quick (it dials the
 * kubelet and opens its streams first). A client's first message (stdin, a resize) is sent once its
 * streams exist, so it starts the command at once: `-it` waits for nothing. 50 ms still lost 2 of
 * 300 runs with kubectl starved on a loaded machine (bench/exec-stress.ts).
 */
export const WEBSOCKET_START_DELAY_MS = 250;

/** The WebSocket framing (kubectl 1.30+): one channel byte, then the payload, per message. */
export class ExecWebSocketSession implements WebSocketSession {
  private readonly run: ExecRun;
  private cancelStart: () => void = () => {};
  /** Until the command starts or the client leaves. */
  private startable = true;

  constructor(
    config: ExecRunOptions,
    readonly protocol: ExecProtocol,
    private readonly clock: Clock,
  ) {
    this.run = new ExecRun(config);
  }

  open(socket: ApiSocket): void {
    this.cancelStart = this.clock.setTimeout(() => this.start(socket), WEBSOCKET_START_DELAY_MS);
  }

  private start(socket: ApiSocket): void {
    if (!this.startable) return;
    this.startable = false;
    this.cancelStart();
    this.run.start({
      send: (stream, data) => socket.send(channelFrame(stream === "stdout" ? CHANNEL.stdout : CHANNEL.stderr, data)) > 0,
      finish: (status) => {
        socket.send(channelFrame(CHANNEL.error, status));
        socket.close(NORMAL_CLOSURE);
      },
      abort: (reason) => socket.close(INTERNAL_ERROR, reason),
    });
  }

  message(socket: ApiSocket, data: Uint8Array): void {
    this.handle(parseClientMessage(this.protocol, data));
    // After the message: a first resize is the terminal's size from its start.
    this.start(socket);
  }

  close(): void {
    this.startable = false;
    this.cancelStart();
    this.run.clientGone();
  }

  private handle(message: ClientMessage): void {
    switch (message.kind) {
      case "stdin":
        return this.run.stdin(message.data);
      case "resize":
        return this.run.resize(message.size);
      case "close":
        if (message.channel === CHANNEL.stdin) this.run.closeStdin();
        return;
      case "ignored":
        return;
    }
  }

  drain(): void {
    this.run.drain();
  }
}
