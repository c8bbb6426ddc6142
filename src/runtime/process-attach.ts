/**
 * What `kubectl attach` can have of a process container. Its stdin is /dev/null and it has no
 * terminal: the monitor (process-monitor.ts, a shell) holds neither, until the compiled monitor
 * does (issue 25). So attach can only follow the container's output, from its log file as
 * `logs -f` follows it; an attach that needs stdin or the container's terminal is refused, saying
 * why, instead of a session that would take the user's typing and drop it.
 */
import type { AttachSupport } from "./runtime.ts";

/** Why the process runtime serves no attach streams: only "output-log" is offered. */
export const NO_ATTACH_STREAMS = "the process runtime's monitor holds no container's stdin or terminal: attach follows the output only";

/** `tty`: the container's spec asks for a terminal; `stdin`: the attach asks for its stdin. */
export function processAttachSupport(request: { stdin: boolean; tty: boolean }): AttachSupport {
  if (request.tty) {
    return { kind: "refused", reason: "the process runtime runs every container without a terminal (tty: true is not honoured): use the docker runtime to attach to it" };
  }
  if (request.stdin) {
    return { kind: "refused", reason: "the process runtime does not keep a container's stdin open (stdin: true is not honoured; it reads /dev/null): attach without -i to follow its output" };
  }
  return { kind: "output-log" };
}
