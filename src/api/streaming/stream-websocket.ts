/**
 * The WebSocket framing of a session (kubectl 1.30+, exec-protocol.ts): one channel byte, then the
 * payload, per message; the remote side (stream-run.ts) starts with the client's first message, or
 * WEBSOCKET_START_DELAY_MS after the upgrade.
 */
import type { Clock } from "../../clock.ts";
import { CHANNEL, endOfSession, execCodec, parseClientMessage, type ClientMessage, type ExecProtocol } from "./exec-protocol.ts";
import { base64ChannelFrame, channelFrame } from "./ws-channels.ts";
import type { ApiSocket, WebSocketSession } from "../http/http.ts";
import type { StreamRun } from "./stream-run.ts";

/** WebSocket close codes: a normal end, and a server-side failure. */
const NORMAL_CLOSURE = 1000;
const INTERNAL_ERROR = 1011;

/**
 * How long after the WebSocket opens the remote side starts, unless the client speaks first.
 * kubectl 1.30 to 1.33 read the connection before creating their streams, and discard a message
 * that comes first ("Unknown stream id", kubernetes#131189, fixed in client-go by
 * kubernetes#131203): a quick command's output and exit code were lost. The API server is never
 * that quick (it dials the kubelet and opens its streams first). A client's first message (stdin, a
 * resize) is sent once its streams exist, so it starts the remote side at once: `-it` waits for
 * nothing. 50 ms still lost 2 of 300 runs with kubectl starved on a loaded machine
 * (bench/exec-stress.ts).
 */
export const WEBSOCKET_START_DELAY_MS = 250;

/** One session's WebSocket: client messages to `run`, its output and end back as channel frames. */
export class StreamWebSocketSession implements WebSocketSession {
  private cancelStart: () => void = () => {};
  /** Until the remote side starts or the client leaves. */
  private startable = true;

  constructor(
    private readonly run: StreamRun,
    readonly protocol: ExecProtocol,
    private readonly clock: Clock,
  ) {}

  open(socket: ApiSocket): void {
    this.cancelStart = this.clock.setTimeout(() => this.start(socket), WEBSOCKET_START_DELAY_MS);
  }

  private start(socket: ApiSocket): void {
    if (!this.startable) return;
    this.startable = false;
    this.cancelStart();
    const codec = execCodec(this.protocol);
    const send = (channel: number, payload: Uint8Array | string) => {
      const bytes = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
      return codec === "binary" ? socket.send(channelFrame(channel, bytes)) : socket.sendText(base64ChannelFrame(channel, bytes));
    };
    this.run.start({
      send: (stream, data) => send(stream === "stdout" ? CHANNEL.stdout : CHANNEL.stderr, data) > 0,
      finish: (status) => {
        const end = endOfSession(this.protocol, status);
        if (end !== undefined) send(CHANNEL.error, end);
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
