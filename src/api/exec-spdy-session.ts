/**
 * The SPDY framing of `kubectl exec` (kubectl 1.27 to 1.29, remotecommand v4 as the kubelet serves
 * it): the client opens one stream per channel, named by its `streamType` header, and the command
 * starts once every stream the query asked for is there. Output goes on the stdout and stderr
 * streams, the end's Status on the error stream, then every stream and the connection end. Stdin
 * ends with its stream; a resize stream carries `{"Width":w,"Height":h}` objects one after another.
 */
import type { ExecOptions } from "./exec-protocol.ts";
import { parseTerminalSize } from "./exec-protocol.ts";
import { ExecRun, type ExecRunOptions } from "./exec-session.ts";
import type { SpdySession } from "./http.ts";
import type { SpdyConnection, SpdyStream } from "./spdy.ts";

/** The only version served over SPDY: the first with the exit code in its Status (v1-v3 have none). */
export const SPDY_EXEC_PROTOCOL = "v4.channel.k8s.io";

/** How long the client has to open the streams it asked for (the kubelet's streamCreationTimeout). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

/** A resize stream's buffered bytes past which it is no longer read (a message is some 30 bytes). */
const MAX_RESIZE_BUFFER = 4096;

type StreamType = "error" | "stdin" | "stdout" | "stderr" | "resize";

/** The streams a client opens for these options, as kubectl does (resize only with a terminal). */
export function expectedStreams(options: ExecOptions): StreamType[] {
  const wanted: StreamType[] = ["error"];
  if (options.stdin) wanted.push("stdin");
  if (options.stdout) wanted.push("stdout");
  if (options.stderr) wanted.push("stderr");
  if (options.tty) wanted.push("resize");
  return wanted;
}

export class ExecSpdySession implements SpdySession {
  readonly protocol = SPDY_EXEC_PROTOCOL;
  private readonly run: ExecRun;
  private readonly streams = new Map<StreamType, SpdyStream>();
  private readonly wanted: StreamType[];

  constructor(config: ExecRunOptions) {
    this.run = new ExecRun(config);
    this.wanted = expectedStreams(config.options);
  }

  open(connection: SpdyConnection): void {
    let started = false;
    const timer = setTimeout(() => connection.end(), STREAM_CREATION_TIMEOUT_MS);
    connection.onClose(() => {
      clearTimeout(timer);
      this.run.clientGone();
    });
    connection.onStream((stream) => {
      // A reset or a stream past GOAWAY is an error event: unheard, it would end the process.
      stream.on("error", () => stream.destroy());
      stream.respond(200, {});
      const type = stream.headers["streamtype"] as StreamType | undefined;
      if (!type || !this.wanted.includes(type) || this.streams.has(type)) {
        // Nothing will be read from or written on it: drained, so it never holds the connection back.
        stream.resume();
        return;
      }
      this.streams.set(type, stream);
      this.listen(type, stream);
      if (started || !this.wanted.every((wanted) => this.streams.has(wanted))) return;
      started = true;
      clearTimeout(timer);
      this.start(connection);
    });
  }

  private listen(type: StreamType, stream: SpdyStream): void {
    if (type === "stdin") {
      stream.on("data", (data: Buffer) => this.run.stdin(data));
      stream.on("end", () => this.run.closeStdin());
    } else if (type === "resize") {
      let pending = "";
      stream.on("data", (data: Buffer) => {
        pending += data.toString("utf8");
        let newline: number;
        while ((newline = pending.indexOf("\n")) !== -1) {
          const size = parseTerminalSize(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
          if (size) this.run.resize(size);
        }
        if (pending.length > MAX_RESIZE_BUFFER) pending = "";
      });
    } else {
      // The client writes nothing on the others; reading keeps their end visible.
      stream.resume();
    }
    if (type === "stdout" || type === "stderr") stream.on("drain", () => this.run.drain());
  }

  private start(connection: SpdyConnection): void {
    this.run.start({
      send: (type, data) => this.streams.get(type)?.write(data) ?? true,
      finish: (status) => {
        this.streams.get("error")?.write(status);
        // GOAWAY only after every stream's last frame went out: the client reads none after it.
        const ended = [...this.streams.values()].map((stream) => new Promise<void>((done) => stream.end(() => done())));
        void Promise.all(ended).then(() => connection.end());
      },
      abort: () => connection.end(),
    });
  }
}
