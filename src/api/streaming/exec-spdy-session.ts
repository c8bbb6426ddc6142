/**
 * The SPDY framing of `kubectl exec` (kubectl 1.27 to 1.29): the command (exec-session.ts) as the
 * remote side of a SPDY session (stream-spdy.ts).
 */
import type { Clock } from "../../clock.ts";
import { execRun, type ExecRunOptions } from "./exec-session.ts";
import { SPDY_STREAM_PROTOCOL, StreamSpdySession } from "./stream-spdy.ts";

export { expectedStreams, STREAM_CREATION_TIMEOUT_MS } from "./stream-spdy.ts";

/** The only version served over SPDY: the first with the exit code in its Status (v1-v3 have none). */
export const SPDY_EXEC_PROTOCOL = SPDY_STREAM_PROTOCOL;

/** The SPDY framing (kubectl 1.27-1.29) of one exec. */
export class ExecSpdySession extends StreamSpdySession {
  constructor(config: ExecRunOptions, clock: Clock) {
    super(execRun(config), config.options, clock);
  }
}
