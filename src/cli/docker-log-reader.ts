/**
 * `logs` for attempts the docker runtime ran: the engine keeps their output (no log file is
 * recorded), so it is read through src/logs/ (as the API's pods/log reads it) from a DockerRuntime
 * by the attempt's runtime id. The runtime (and dockerode) is loaded only when such an attempt is
 * asked for, so `logs` on a process-runtime database never touches the docker socket.
 */
import { StringDecoder } from "node:string_decoder";
import { EngineLogError, writeEngineLogs } from "../logs/attempt-logs.ts";
import type { AttemptRow } from "../store/queries.ts";
import type { DockerRuntime } from "../runtime/docker.ts";
import { UserError } from "./cli.ts";
import type { LogReader } from "./logs.ts";

/** Streams an attempt's output from the engine until it stops or the signal aborts (`logs -f`). */
export type LogFollower = (attempt: AttemptRow, tail: number | undefined, onText: (text: string) => void, signal: AbortSignal) => Promise<void>;

const defaultRuntime = async () => new (await import("../runtime/docker.ts")).DockerRuntime();

export function dockerLogFollower(create: () => Promise<DockerRuntime> = defaultRuntime): LogFollower {
  return async (attempt, tail, onText, signal) => {
    if (!attempt.runtimeId) throw new UserError(`logs of container "${attempt.container}" attempt ${attempt.attempt}: no runtime id is recorded (the container never started)`);
    const runtime = await create();
    try {
      await readEngine(attempt, { tailLines: tail, follow: true }, runtime, signal, onText);
    } finally {
      await runtime.close();
    }
  };
}

/** A LogReader over the engine at DOCKER_HOST (or the default socket), connected on first use. */
export function dockerLogReader(create: () => Promise<DockerRuntime> = defaultRuntime): LogReader {
  let runtime: Promise<DockerRuntime> | undefined;
  return async (attempt: AttemptRow, tail?: number) => {
    if (!attempt.runtimeId) throw new UserError(`logs of container "${attempt.container}" attempt ${attempt.attempt}: no runtime id is recorded (the container never started)`);
    runtime ??= create();
    let text = "";
    await readEngine(attempt, { tailLines: tail }, await runtime, new AbortController().signal, (chunk) => (text += chunk));
    return text;
  };
}

async function readEngine(attempt: AttemptRow, query: { tailLines?: number; follow?: boolean }, runtime: DockerRuntime, signal: AbortSignal, onText: (text: string) => void): Promise<void> {
  const utf8 = new StringDecoder("utf8");
  try {
    await writeEngineLogs(attempt, query, { signal, engine: async () => runtime }, (bytes) => {
      const text = utf8.write(Buffer.from(bytes));
      if (text) onText(text);
    });
  } catch (error) {
    if (error instanceof EngineLogError) throw new UserError(error.message, { cause: error });
    throw error;
  }
  const rest = utf8.end();
  if (rest) onText(rest);
}
