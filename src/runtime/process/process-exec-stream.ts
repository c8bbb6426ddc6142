/**
 * Interactive exec for the process runtime (`kubectl exec`): the command runs in the container's
 * working directory with its env, in a session of its own, on pipes or, with a TTY, on a
 * pseudo-terminal from Bun.spawn's `terminal` option (it makes the command a session leader with
 * the terminal as its controlling tty, so job control and ^C work as in a container).
 */
import { constants } from "node:os";
import type { Clock } from "../../clock.ts";
import { killGroup } from "./process-exec.ts";
import type { ExecSession, ExecStreamRequest, TerminalSize } from "../runtime.ts";

/**
 * How long output may still come after the command exited: a child it left running in the
 * background can hold the pipes (or the terminal) open, and must not hold the session open forever.
 */
export const EXEC_DRAIN_MS = 500;

/** The exit code of a command killed by the caller's abort (128 + SIGKILL), as docker reports it. */
export const KILLED_EXIT_CODE = 137;

type Reader = ReadableStreamDefaultReader<Uint8Array<ArrayBuffer>>;

const DEFAULT_SIZE: TerminalSize = { width: 80, height: 24 };

export interface ProcessExecStreamOptions {
  cwd: string;
  env: Record<string, string>;
  clock: Clock;
  request: ExecStreamRequest;
}

/** A running container, as an exec beside it needs it. */
export interface ExecTarget {
  /** Calls `onExit` when the container exits; returns the unsubscribe. */
  onExit(onExit: () => void): () => void;
  isRunning(): boolean;
}

/**
 * startProcessExec beside a container: a process in a container dies with it, this one runs beside
 * it, so it is ended (as by the caller's abort) when the container exits, or at once if it has.
 */
export function startExecBeside(target: ExecTarget, options: ProcessExecStreamOptions): ExecSession {
  const { request } = options;
  const containerGone = new AbortController();
  const signal = request.signal ? AbortSignal.any([request.signal, containerGone.signal]) : containerGone.signal;
  const unsubscribe = target.onExit(() => containerGone.abort());
  if (!target.isRunning()) containerGone.abort();
  try {
    const session = startProcessExec({ ...options, request: { ...request, signal } });
    void session.exited.finally(unsubscribe);
    return session;
  } catch (error) {
    unsubscribe();
    throw error;
  }
}

export function startProcessExec(options: ProcessExecStreamOptions): ExecSession {
  const { request } = options;
  if (request.command.length === 0) throw new Error("exec: command is empty");
  // Through sh, so a missing command is the shell's 127 with its message on stderr, as in a container.
  const argv = ["/bin/sh", "-c", 'exec "$@"', "sh", ...request.command];
  return request.tty ? startOnTerminal(argv, options) : startOnPipes(argv, options);
}

function startOnPipes(argv: string[], { cwd, env, clock, request }: ProcessExecStreamOptions): ExecSession {
  const child = Bun.spawn(argv, {
    cwd,
    env,
    detached: true,
    stdin: request.stdin ? "pipe" : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stopOnAbort = onAbort(request.signal, () => killGroup(child.pid, "SIGKILL"));
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pumps = Promise.all([pump(readers[0] as Reader, "stdout", request), pump(readers[1] as Reader, "stderr", request)]);
  let stdinOpen = request.stdin;
  const closeStdin = () => {
    if (!stdinOpen) return;
    stdinOpen = false;
    ignoreErrors(() => child.stdin?.end());
  };
  const exited = child.exited.then(async (code) => {
    closeStdin();
    await drain(pumps, clock, () => readers.forEach((reader) => reader.cancel().catch(() => undefined)));
    stopOnAbort();
    return exitCodeOf(code, child.signalCode);
  });
  return {
    write(data) {
      if (!stdinOpen) return;
      ignoreErrors(() => {
        child.stdin?.write(data);
        void child.stdin?.flush();
      });
    },
    closeStdin,
    resize: async () => undefined,
    exited,
  };
}

function startOnTerminal(argv: string[], { cwd, env, clock, request }: ProcessExecStreamOptions): ExecSession {
  let markClosed: () => void = () => undefined;
  const terminalClosed = new Promise<void>((resolve) => (markClosed = resolve));
  const size = request.size ?? DEFAULT_SIZE;
  const child = Bun.spawn(argv, {
    cwd,
    // Like docker's exec with a TTY: a terminal type unless the container sets its own.
    env: { TERM: "xterm", ...env },
    terminal: {
      cols: size.width,
      rows: size.height,
      // A terminal cannot be paused: the caller bounds what it holds back instead.
      data: (_terminal, data) => void request.output("stdout", data),
      exit: () => markClosed(),
    },
  });
  const terminal = child.terminal as Bun.Terminal;
  const stopOnAbort = onAbort(request.signal, () => killGroup(child.pid, "SIGKILL"));
  const exited = child.exited.then(async (code) => {
    await drain(terminalClosed, clock, () => undefined);
    ignoreErrors(() => terminal.close());
    stopOnAbort();
    return exitCodeOf(code, child.signalCode);
  });
  return {
    write(data) {
      if (!terminal.closed) ignoreErrors(() => terminal.write(data));
    },
    // A terminal has no end of input short of closing it; the user types ^D or exit.
    closeStdin() {},
    async resize(next) {
      if (!terminal.closed && next.width > 0 && next.height > 0) ignoreErrors(() => terminal.resize(next.width, next.height));
    },
    exited,
  };
}

async function pump(reader: Reader, stream: "stdout" | "stderr", request: ExecStreamRequest): Promise<void> {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      await request.output(stream, value);
    }
  } catch {
    // Cancelled after the drain time, or the caller's output failed: either way nothing more to read.
  }
}

/** Waits for `done`, giving up (and calling `giveUp`) EXEC_DRAIN_MS after the command exited. */
async function drain(done: Promise<unknown>, clock: Clock, giveUp: () => void): Promise<void> {
  let cancel: () => void = () => undefined;
  const late = new Promise<void>((resolve) => {
    cancel = clock.setTimeout(() => {
      giveUp();
      resolve();
    }, EXEC_DRAIN_MS);
  });
  await Promise.race([done.then(() => undefined), late]);
  cancel();
}

function onAbort(signal: AbortSignal | undefined, kill: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) kill();
  signal.addEventListener("abort", kill, { once: true });
  return () => signal.removeEventListener("abort", kill);
}

function exitCodeOf(code: number | null, signal: string | null): number {
  if (signal) return 128 + (constants.signals[signal as NodeJS.Signals] ?? 0);
  return code ?? KILLED_EXIT_CODE;
}

function ignoreErrors(action: () => unknown): void {
  try {
    action();
  } catch {
    // The command already exited and closed its end: nothing to deliver to.
  }
}
