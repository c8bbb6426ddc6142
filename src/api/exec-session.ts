/**
 * One upgraded `kubectl exec`: the WebSocket's messages to the runtime's ExecSession and back. The
 * command starts when the socket opens; input that comes before it has started is held (bounded).
 * A slow client holds back the command's output (pipes and the engine's stream pause); a terminal
 * cannot pause, so past MAX_UNSENT_BYTES waiting for the client the session is ended. The socket
 * closing kills the command; the command ending sends its Status on channel 3 and closes.
 */
import type { ExecSession, Runtime, TerminalSize } from "../runtime/runtime.ts";
import { CHANNEL, errorStatusFrame, exitStatusFrame, frame, parseClientMessage, type ExecOptions, type ExecProtocol } from "./exec-protocol.ts";
import type { ApiSocket, WebSocketSession } from "./http.ts";

/** Output queued for a client that stopped reading, past which a terminal session is ended. */
export const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/** Input held until the command has started. */
export const MAX_EARLY_INPUT_BYTES = 1024 * 1024;

/** WebSocket close codes: a normal end, and a server-side failure. */
const NORMAL_CLOSURE = 1000;
const INTERNAL_ERROR = 1011;

export interface ExecWebSocketSessionOptions {
  runtime: Pick<Runtime, "execStream">;
  containerId: string;
  options: ExecOptions;
  protocol: ExecProtocol;
  /** Called when the session is over (the command ended or the client left); maybe twice, so idempotent. */
  onEnd: () => void;
}

export class ExecWebSocketSession implements WebSocketSession {
  readonly protocol: ExecProtocol;
  private readonly abort = new AbortController();
  private exec: ExecSession | undefined;
  private early: Uint8Array[] = [];
  private earlyBytes = 0;
  private stdinClosed = false;
  private size: TerminalSize | undefined;
  private socket: ApiSocket | undefined;
  private closed = false;
  private unsentBytes = 0;
  private drained: (() => void) | undefined;

  constructor(private readonly config: ExecWebSocketSessionOptions) {
    this.protocol = config.protocol;
  }

  open(socket: ApiSocket): void {
    this.socket = socket;
    const { options } = this.config;
    this.config.runtime
      .execStream(this.config.containerId, {
        command: options.command,
        stdin: options.stdin,
        tty: options.tty,
        ...(this.size && { size: this.size }),
        output: (stream, data) => this.output(stream, data),
        signal: this.abort.signal,
      })
      .then(
        (exec) => this.started(exec),
        (error: unknown) => this.finish(errorStatusFrame(error instanceof Error ? error.message : String(error))),
      );
  }

  message(_socket: ApiSocket, data: Uint8Array): void {
    const message = parseClientMessage(this.protocol, data);
    switch (message.kind) {
      case "stdin":
        if (!this.config.options.stdin || this.stdinClosed) return;
        if (this.exec) return this.exec.write(message.data);
        this.earlyBytes += message.data.length;
        if (this.earlyBytes <= MAX_EARLY_INPUT_BYTES) this.early.push(message.data.slice());
        return;
      case "resize":
        this.size = message.size;
        if (this.exec && this.config.options.tty) void this.exec.resize(message.size);
        return;
      case "close":
        if (message.channel !== CHANNEL.stdin || this.stdinClosed) return;
        this.stdinClosed = true;
        this.exec?.closeStdin();
        return;
      case "ignored":
        return;
    }
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
    this.releaseOutput();
    this.config.onEnd();
  }

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
      (code) => this.finish(exitStatusFrame(code)),
      (error: unknown) => this.finish(errorStatusFrame(String(error))),
    );
  }

  private output(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void> {
    const wanted = stream === "stdout" ? this.config.options.stdout : this.config.options.stderr;
    if (!wanted || this.closed || !this.socket) return;
    const sent = this.socket.send(frame(stream === "stdout" ? CHANNEL.stdout : CHANNEL.stderr, data));
    if (sent > 0) return;
    this.unsentBytes += data.length;
    if (this.unsentBytes > MAX_UNSENT_BYTES) {
      // Only a terminal gets here (everything else waits below): it cannot be paused.
      this.abort.abort();
      this.socket.close(INTERNAL_ERROR, `the client read no output while ${MAX_UNSENT_BYTES} bytes waited`);
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

  private finish(status: Uint8Array): void {
    if (this.closed || !this.socket) return;
    this.socket.send(status);
    this.socket.close(NORMAL_CLOSURE);
    this.config.onEnd();
  }
}
