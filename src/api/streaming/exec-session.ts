/**
 * One upgraded `kubectl exec`: the command run by the runtime's execStream as the remote side of a
 * session (stream-run.ts), over WebSocket here or SPDY (exec-spdy-session.ts). The client leaving
 * kills the command; the command's end is its exit code's Status.
 */
import type { Clock } from "../../clock.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { errorStatus, exitStatus, type ExecOptions, type ExecProtocol } from "./exec-protocol.ts";
import { StreamRun } from "./stream-run.ts";
import { StreamWebSocketSession } from "./stream-websocket.ts";

export { MAX_EARLY_INPUT_BYTES, MAX_UNSENT_BYTES } from "./stream-run.ts";
export { WEBSOCKET_START_DELAY_MS } from "./stream-websocket.ts";

/** One exec: the runtime that runs it, the container, the query's options, and the session's end. */
export interface ExecRunOptions {
  runtime: Pick<Runtime, "execStream">;
  containerId: string;
  options: ExecOptions;
  /** Called when the session is over (the command ended or the client left); maybe twice, so idempotent. */
  onEnd: () => void;
}

/** The command as a session's remote side: the client leaving aborts (kills) it. */
export function execRun(config: ExecRunOptions): StreamRun {
  const { options } = config;
  return new StreamRun({
    flags: options,
    onEnd: config.onEnd,
    start: async ({ size, output, signal }) => {
      const exec = await config.runtime.execStream(config.containerId, { command: options.command, stdin: options.stdin, tty: options.tty, ...(size && { size }), output, signal });
      return {
        write: (data) => exec.write(data),
        closeStdin: () => exec.closeStdin(),
        resize: (next) => exec.resize(next),
        status: exec.exited.then(exitStatus, (error: unknown) => errorStatus(String(error))),
      };
    },
  });
}

/** The WebSocket framing (kubectl 1.30+) of one exec. */
export class ExecWebSocketSession extends StreamWebSocketSession {
  constructor(config: ExecRunOptions, protocol: ExecProtocol, clock: Clock) {
    super(execRun(config), protocol, clock);
  }
}
