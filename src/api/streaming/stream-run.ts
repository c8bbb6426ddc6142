/**
 * The runtime's side of one upgraded session (`kubectl exec`, `kubectl attach`), whatever framing
 * carries it (stream-websocket.ts, stream-spdy.ts): the client's input to the runtime and its output
 * back. The remote side starts when the connection is ready; input that comes before it has started
 * is held (bounded). A slow client holds back the output (pipes and the engine's stream pause); a
 * terminal cannot pause, so past MAX_UNSENT_BYTES waiting for the client the session is ended. The
 * client leaving aborts the remote side (exec kills its command, attach detaches); the remote side
 * ending sends its Status and closes.
 */
import type { TerminalSize } from "../../runtime/runtime.ts";
import { errorStatus } from "./exec-protocol.ts";

/** Output queued for a client that stopped reading, past which a terminal session is ended. */
export const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/** Input held until the remote side has started. */
export const MAX_EARLY_INPUT_BYTES = 1024 * 1024;

/** The streams a session carries, as the query asked (PodExecOptions, PodAttachOptions). */
export interface StreamFlags {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** What the remote side is given to start with. */
export interface StreamStart {
  /** The terminal's size when the client sent one before the start (tty only). */
  size?: TerminalSize;
  output(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** The started remote side: a runtime's ExecSession or AttachSession, and the Status its end is told with. */
export interface StreamTarget {
  write(data: Uint8Array): void;
  closeStdin(): void;
  resize(size: TerminalSize): Promise<void>;
  /** The v1 Status JSON for channel 3 (the error stream), once the remote side is over. */
  status: Promise<string>;
}

export interface StreamRunOptions {
  /** What the remote side gets: stdin accepted, which output is sent on, resizes passed on. */
  flags: StreamFlags;
  /** Starts the remote side; a rejection ends the session with its message as an InternalError Status. */
  start(io: StreamStart): Promise<StreamTarget>;
  /** Called when the session is over (it ended or the client left); maybe twice, so idempotent. */
  onEnd: () => void;
}

/** How a framing carries the remote side to the client. */
export interface StreamOutput {
  /** Sends one chunk of output; false when the client is behind (`drain` follows when it catches up). */
  send(stream: "stdout" | "stderr", data: Uint8Array): boolean;
  /** Sends the end as a v1 Status (JSON) and closes. */
  finish(status: string): void;
  /** Ends the connection at once: the server gave up on it. */
  abort(reason: string): void;
}

/** The remote side of a session, driven by a framing's `start`, input calls and `clientGone`. */
export class StreamRun {
  private readonly abortRemote = new AbortController();
  private target: StreamTarget | undefined;
  private early: Uint8Array[] = [];
  private earlyBytes = 0;
  private stdinClosed = false;
  private size: TerminalSize | undefined;
  private output: StreamOutput | undefined;
  private closed = false;
  private unsentBytes = 0;
  private drained: (() => void) | undefined;
  /** Resizes in the order they came: kubectl attach sends its size + 1 then its size, and the last must win. */
  private resizing: Promise<void> = Promise.resolve();

  constructor(private readonly config: StreamRunOptions) {}

  get flags(): StreamFlags {
    return this.config.flags;
  }

  start(output: StreamOutput): void {
    this.output = output;
    this.config
      .start({
        ...(this.size && { size: this.size }),
        output: (stream, data) => this.send(stream, data),
        signal: this.abortRemote.signal,
      })
      .then(
        (target) => this.started(target),
        (error: unknown) => this.finish(errorStatus(error instanceof Error ? error.message : String(error))),
      );
  }

  stdin(data: Uint8Array): void {
    if (!this.config.flags.stdin || this.stdinClosed) return;
    if (this.target) return this.target.write(data);
    this.earlyBytes += data.length;
    if (this.earlyBytes <= MAX_EARLY_INPUT_BYTES) this.early.push(data.slice());
  }

  closeStdin(): void {
    if (this.stdinClosed) return;
    this.stdinClosed = true;
    this.target?.closeStdin();
  }

  resize(size: TerminalSize): void {
    this.size = size;
    if (this.target && this.config.flags.tty) this.applySize(this.target, size);
  }

  /** The client went away: the remote side is aborted. */
  clientGone(): void {
    this.closed = true;
    this.abortRemote.abort();
    this.releaseOutput();
    this.config.onEnd();
  }

  /** The client caught up with the output sent. */
  drain(): void {
    this.unsentBytes = 0;
    this.releaseOutput();
  }

  private started(target: StreamTarget): void {
    this.target = target;
    for (const data of this.early) target.write(data);
    this.early = [];
    if (this.size && this.config.flags.tty) this.applySize(target, this.size);
    if (this.stdinClosed) target.closeStdin();
    target.status.then(
      (status) => this.finish(status),
      (error: unknown) => this.finish(errorStatus(String(error))),
    );
  }

  /** Each resize waits for the one before: two engine calls in flight could land in either order. */
  private applySize(target: StreamTarget, size: TerminalSize): void {
    this.resizing = this.resizing.then(() => target.resize(size)).catch(() => undefined);
  }

  private send(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void> {
    const wanted = stream === "stdout" ? this.config.flags.stdout : this.config.flags.stderr;
    if (!wanted || this.closed || !this.output) return;
    if (this.output.send(stream, data)) return;
    this.unsentBytes += data.length;
    if (this.unsentBytes > MAX_UNSENT_BYTES) {
      // Only a terminal gets here (everything else waits below): it cannot be paused.
      this.abortRemote.abort();
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
