/**
 * The remote side of one `kubectl attach` (stream-run.ts), as the runtime can serve it
 * (Runtime.attachSupport): the runtime's own attach to the container's main process, or, where the
 * runtime holds only the output (the process runtime), the container's log followed from its end
 * as `logs -f` follows it. Either way the client leaving detaches (the container runs on), and the
 * end is the kubelet's Success Status; a failure is its "error attaching to container".
 */
import { writeAttemptLogs } from "../../logs/attempt-logs.ts";
import { chooseAttempt } from "../../logs/select.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import type { PodRow } from "../../store/queries.ts";
import type { ApiContext } from "../http/context.ts";
import { successStatus } from "./exec-protocol.ts";
import { StreamRun, type StreamFlags } from "./stream-run.ts";

export interface AttachRunOptions {
  /** What the session carries: stdin only for a container created with it, tty the container's. */
  flags: StreamFlags;
  /** Frees the session's slot; maybe called twice. */
  onEnd: () => void;
}

/** Through the runtime's attach (attachSupport "streams"). */
export function runtimeAttachRun(runtime: Pick<Runtime, "attachContainer">, containerId: string, options: AttachRunOptions): StreamRun {
  const { flags } = options;
  return new StreamRun({
    flags,
    onEnd: options.onEnd,
    start: async ({ size, output, signal }) => {
      const session = await runtime.attachContainer(containerId, { stdin: flags.stdin, tty: flags.tty, ...(size && { size }), output, signal }).catch((error: unknown) => {
        throw new Error(`error attaching to container: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      });
      return {
        write: (data) => session.write(data),
        closeStdin: () => session.closeStdin(),
        resize: (next) => session.resize(next),
        status: session.ended.then(successStatus),
      };
    },
  });
}

/**
 * The container's output from its running attempt's log, from the end on (attachSupport
 * "output-log"): no stdin, no terminal, and the log's stdout and stderr interleaved as written, on stdout.
 */
export function outputLogRun(api: ApiContext, pod: PodRow, container: string, options: AttachRunOptions): StreamRun {
  return new StreamRun({
    flags: options.flags,
    onEnd: options.onEnd,
    start: async ({ output, signal }) => {
      const choice = chooseAttempt(api.store, pod, container, false);
      if (choice.kind !== "attempt") throw new Error(`error attaching to container: container "${container}" has not started`);
      const reading = writeAttemptLogs(choice.attempt, { follow: true, tailLines: 0 }, { store: api.store, clock: api.clock, signal, commits: api.commits }, (bytes) => output("stdout", bytes));
      return {
        write: () => {},
        closeStdin: () => {},
        resize: async () => {},
        status: reading.then(successStatus),
      };
    },
  });
}
