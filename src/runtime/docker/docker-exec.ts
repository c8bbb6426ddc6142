/**
 * `docker exec` with a deadline, for exec probes and preStop hooks. The deadline is armed before
 * the exec is created, so a command never starts after its time is up; a command still running at
 * the deadline is killed (with its children) when the engine is on this host, and is abandoned
 * otherwise: the caller is never kept waiting past the timeout.
 */
import { readFileSync } from "node:fs";
import type Dockerode from "dockerode";
import type { Clock } from "../../clock.ts";
import { dockerMessage, isConflict, isNotFound } from "./docker-errors.ts";
import { FrameCollector } from "./docker-frames.ts";
import type { ExecResult } from "../runtime.ts";

/** Probe output beyond this is cut, like the kubelet's 10 KiB limit on probe messages. */
export const EXEC_OUTPUT_LIMIT = 10 * 1024;

/** The exit code reported for a command killed at its deadline (128 + SIGKILL). */
export const TIMED_OUT_EXIT_CODE = 137;

/**
 * Rethrows an exec's failure: 409 (the container is not running) and 404 (it is gone) as an error
 * naming the command and the container, anything else as it is.
 */
export function rethrowExecError(error: unknown, command: string[], containerId: string): never {
  if (isConflict(error) || isNotFound(error)) {
    throw new Error(`exec ${JSON.stringify(command)} in container ${containerId.slice(0, 12)}: ${dockerMessage(error)}`, { cause: error });
  }
  throw error;
}

export async function execWithTimeout(
  container: Dockerode.Container,
  command: string[],
  timeoutMs: number,
  clock: Clock,
): Promise<ExecResult> {
  const deadline = new AbortController();
  const cancel = clock.setTimeout(() => deadline.abort(), timeoutMs);
  const output = new FrameCollector(EXEC_OUTPUT_LIMIT);
  const timedOut = (): ExecResult => ({ exitCode: TIMED_OUT_EXIT_CODE, output: output.text(), timedOut: true });
  try {
    const exec = await container.exec({ Cmd: command, AttachStdout: true, AttachStderr: true, AttachStdin: false, Tty: false });
    if (deadline.signal.aborted) return timedOut();
    const stream = (await exec.start({ hijack: false, stdin: false, Detach: false })) as NodeJS.ReadableStream & {
      destroy?: () => void;
    };
    const finished = await new Promise<boolean>((resolve) => {
      const done = () => resolve(true);
      stream.on("data", (chunk: Buffer) => output.push(chunk));
      stream.on("end", done);
      stream.on("close", done);
      stream.on("error", done);
      if (deadline.signal.aborted) resolve(false);
      deadline.signal.addEventListener("abort", () => resolve(false), { once: true });
    });
    if (!finished) {
      await killExec(exec);
      stream.destroy?.();
      return timedOut();
    }
    const info = await exec.inspect();
    return { exitCode: info.ExitCode ?? -1, output: output.text(), timedOut: false };
  } finally {
    cancel();
  }
}

/**
 * Kills the exec'd process and its descendants by host pid. The engine has no API for this;
 * reading /proc works when dockerd runs on this host and we may signal its processes (root).
 */
export async function killExec(exec: Dockerode.Exec): Promise<void> {
  let pid: number | undefined;
  try {
    const info = await exec.inspect();
    pid = info.Running ? info.Pid : undefined;
  } catch {
    return;
  }
  if (!pid) return;
  for (const target of [pid, ...descendants(pid)]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // Gone already, another host's pid namespace, or not ours to signal: stop waiting anyway.
    }
  }
}

function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && found.length < 1024) {
    const current = queue.shift() as number;
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${current}/task/${current}/children`, "utf8")
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      // No /proc entry: not on this host, or already exited.
    }
    found.push(...children);
    queue.push(...children);
  }
  return found;
}
