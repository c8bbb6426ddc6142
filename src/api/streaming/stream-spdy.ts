/**
 * The SPDY framing of a session (kubectl 1.27 to 1.29, remotecommand v4 as the kubelet serves it):
 * the client opens one stream per channel, named by its `streamType` header, and the remote side
 * (stream-run.ts) starts once every stream the query asked for is there and answered. Output goes on
 * the stdout and stderr streams, the end's Status on the error stream, then every stream ends and
 * the client closes the connection. Stdin ends with its stream; a resize stream carries
 * `{"Width":w,"Height":h}` objects one after another.
 */
import type { Clock } from "../../clock.ts";
import { errorStatus, parseTerminalSize } from "./exec-protocol.ts";
import type { SpdySession } from "../http/http.ts";
import { STREAM_CREATION_TIMEOUT_MS, type SpdyConnection, type SpdyStream } from "../http/spdy.ts";
import type { StreamFlags, StreamRun } from "./stream-run.ts";

/** The only version served over SPDY: the first with the exit code in its Status (v1-v3 have none). */
export const SPDY_STREAM_PROTOCOL = "v4.channel.k8s.io";

export { STREAM_CREATION_TIMEOUT_MS };

/** A resize stream's buffered bytes past which it is no longer read (a message is some 30 bytes). */
const MAX_RESIZE_BUFFER = 4096;

type StreamType = "error" | "stdin" | "stdout" | "stderr" | "resize";

/** The streams a client opens for these options, as kubectl does (resize only with a terminal). */
export function expectedStreams(options: StreamFlags): StreamType[] {
  const wanted: StreamType[] = ["error"];
  if (options.stdin) wanted.push("stdin");
  if (options.stdout) wanted.push("stdout");
  if (options.stderr) wanted.push("stderr");
  if (options.tty) wanted.push("resize");
  return wanted;
}

/** One session's SPDY connection: the client's streams to `run`, its output and end back on them. */
export class StreamSpdySession implements SpdySession {
  readonly protocol = SPDY_STREAM_PROTOCOL;
  private readonly streams = new Map<StreamType, SpdyStream>();
  /** The streams whose SYN_REPLY is written: only those may carry frames (see `open`). */
  private readonly replied = new Set<StreamType>();
  private readonly wanted: StreamType[];

  /** `asked`: the streams the client's query asked for, which it opens (the run's flags may drop some). */
  constructor(
    private readonly run: StreamRun,
    asked: StreamFlags,
    private readonly clock: Clock,
  ) {
    this.wanted = expectedStreams(asked);
  }

  open(connection: SpdyConnection): void {
    let started = false;
    const cancelTimeout = this.clock.setTimeout(() => this.timedOut(connection), STREAM_CREATION_TIMEOUT_MS);
    connection.onClose(() => {
      cancelTimeout();
      this.run.clientGone();
    });
    connection.onStream((stream) => {
      // A reset or a stream past GOAWAY is an error event: unheard, it would end the process.
      stream.on("error", () => stream.destroy());
      const type = stream.headers["streamtype"] as StreamType | undefined;
      if (!type || !this.wanted.includes(type) || this.streams.has(type)) {
        stream.respond(200, {});
        // Nothing will be read from or written on it: drained, so it never holds the connection back.
        stream.resume();
        return;
      }
      this.streams.set(type, stream);
      this.listen(type, stream);
      // The remote side starts once every reply is written, as the kubelet waits for its replies: the
      // replies are compressed asynchronously, so a quick command's output, Status and ends could
      // otherwise go out before the last reply, which kubectl would then wait for in vain.
      stream.respond(200, {}, (error) => {
        if (error) return;
        this.replied.add(type);
        if (started || !this.wanted.every((wanted) => this.replied.has(wanted))) return;
        started = true;
        cancelTimeout();
        this.start(connection);
      });
    });
  }

  /**
   * The client did not open (or we could not answer) every stream in time: a Status on the error
   * stream says which are missing, every answered stream ends, and the connection is cut soon after.
   */
  private timedOut(connection: SpdyConnection): void {
    const missing = this.wanted.filter((type) => !this.replied.has(type));
    if (this.replied.has("error")) this.streams.get("error")?.write(errorStatus(`timed out waiting for the client to create streams (${missing.join(", ")})`));
    for (const type of this.replied) this.streams.get(type)?.end();
    connection.finish();
    this.run.clientGone();
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
        for (const stream of this.streams.values()) stream.end();
        connection.finish();
      },
      abort: () => connection.end(),
    });
  }
}
