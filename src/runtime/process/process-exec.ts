/**
 * Exec for the process runtime: a command run in a container's working directory with its env,
 * in a session of its own so a timeout kills everything it started.
 */
import { constants } from "node:os";
import type { Clock } from "../../clock.ts";
import type { ExecResult } from "../runtime.ts";

/** Like the kubelet's probe output limit: more than this is cut. */
export const EXEC_OUTPUT_LIMIT = 10 * 1024;

export interface ExecOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  clock: Clock;
  /** Kills the command as the timeout does (reported as timed out). */
  signal?: AbortSignal;
}

/**
 * Runs `argv` and resolves with its combined output and exit code (126/127 when it cannot be run,
 * as a shell reports). At the timeout the whole process group is SIGKILLed and `timedOut` is true.
 */
export async function execInContainer(options: ExecOptions): Promise<ExecResult> {
  if (options.argv.length === 0) throw new Error("exec: command is empty");
  // `exec "$@" 2>&1` interleaves stderr into the one stdout pipe in write order.
  const child = Bun.spawn(["/bin/sh", "-c", 'exec "$@" 2>&1', "sh", ...options.argv], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  let timedOut = false;
  const kill = () => {
    timedOut = true;
    killGroup(child.pid, "SIGKILL");
  };
  const cancel = options.clock.setTimeout(kill, options.timeoutMs);
  if (options.signal?.aborted) kill();
  options.signal?.addEventListener("abort", kill, { once: true });
  const output = readLimited(child.stdout, EXEC_OUTPUT_LIMIT);
  const exitCode = await child.exited;
  cancel();
  options.signal?.removeEventListener("abort", kill);
  // Kill stragglers that kept the pipe open, so reading the output cannot hang.
  killGroup(child.pid, "SIGKILL");
  return { exitCode: child.signalCode ? 128 + signalNumber(child.signalCode) : exitCode, output: await output, timedOut };
}

export function killGroup(pid: number, signal: NodeJS.Signals | number): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

function signalNumber(name: string): number {
  return constants.signals[name as NodeJS.Signals] ?? 0;
}

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (text.length < limit) text += decoder.decode(value, { stream: true });
  }
  return text.length > limit ? text.slice(0, limit) : text;
}
