/**
 * exec probes, like the kubelet's pkg/probe/exec over the CRI's ExecSync: exit 0 is success, any
 * other exit is a failure whose message is the command's output, and a command still running at
 * the timeout is a failure worded `command "sh -c sleep 5" timed out`.
 */
import type { Clock } from "../clock.ts";
import type { ExecResult } from "../runtime/runtime.ts";
import { goQuote, type ProbeResult } from "./probe-result.ts";

/** The one runtime call an exec probe needs: the shape of `Runtime["execSync"]`. */
export type ExecFn = (containerId: string, command: string[], timeoutMs: number) => Promise<ExecResult>;

/** The kubelet reads at most this much of an exec probe's output (pkg/probe/exec maxReadLength). */
export const MAX_EXEC_OUTPUT = 10 * 1024;

/**
 * Runs `command` in the container through `exec`. The runtime is asked to kill the command at the
 * timeout; the same timeout is also armed on `clock`, so a runtime call that hangs past it still
 * ends the probe on time (the runtime's own call is left to finish in the background).
 * A rejected exec (no such container, runtime down) is an errored probe, not a failed one.
 */
export function execProbe(exec: ExecFn, clock: Clock, containerId: string, command: string[], timeoutMs: number): Promise<ProbeResult> {
  const timedOut: ProbeResult = { ok: false, message: `command ${goQuote(command.join(" "))} timed out` };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      resolve(result);
    };
    const cancelTimer = clock.setTimeout(() => finish(timedOut), timeoutMs);
    exec(containerId, command, timeoutMs).then(
      (result) => {
        if (result.timedOut) return finish(timedOut);
        // Event messages are one line in `run`'s output: the trailing newline of `echo` goes.
        const output = result.output.slice(0, MAX_EXEC_OUTPUT).trimEnd();
        finish({ ok: result.exitCode === 0, message: output });
      },
      (error: unknown) =>
        finish({ ok: false, errored: true, message: error instanceof Error ? error.message : String(error) }),
    );
  });
}
