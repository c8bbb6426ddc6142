/**
 * `logs` for attempts the docker runtime ran: the engine keeps their output (no log file is
 * recorded), so it is read through src/logs/ (as the API's pods/log reads it) from the engine
 * by the attempt's runtime id, with fetch alone (src/runtime/docker/docker-logs.ts), so `logs` never loads
 * dockerode; an engine over TLS or ssh is refused, as the runtime refuses it. Nothing is opened until
 * such an attempt is asked for, so `logs` on a process-runtime database never touches the socket.
 */
import { StringDecoder } from "node:string_decoder";
import { EngineLogError, writeEngineLogs, type EngineLogs } from "../../logs/attempt-logs.ts";
import { engineAddressFromEnv, streamEngineLogs } from "../../runtime/docker/docker-logs.ts";
import type { AttemptRow } from "../../store/queries.ts";
import { UserError } from "../errors.ts";
import type { LogFollower, LogReader } from "./logs.ts";

/** Streams an attempt's output from the engine until it stops or the signal aborts (`logs -f`). */

async function engineAtDockerHost(): Promise<EngineLogs> {
  const address = engineAddressFromEnv();
  if (!address) throw new UserError(`logs: the engine at DOCKER_HOST=${process.env.DOCKER_HOST} is reached over TLS or ssh, which logs does not read from`);
  return { streamLogs: (...args) => streamEngineLogs(address, ...args) };
}

export function dockerLogFollower(create: () => Promise<EngineLogs> = engineAtDockerHost): LogFollower {
  return async (attempt, tail, onText, signal) => {
    if (!attempt.runtimeId) throw new UserError(`logs of container "${attempt.container}" attempt ${attempt.attempt}: no runtime id is recorded (the container never started)`);
    await readEngine(attempt, { tailLines: tail, follow: true }, await create(), signal, onText);
  };
}

/** A LogReader over the engine at DOCKER_HOST (or the default socket), connected on first use. */
export function dockerLogReader(create: () => Promise<EngineLogs> = engineAtDockerHost): LogReader {
  let engine: Promise<EngineLogs> | undefined;
  return async (attempt: AttemptRow, tail?: number) => {
    if (!attempt.runtimeId) throw new UserError(`logs of container "${attempt.container}" attempt ${attempt.attempt}: no runtime id is recorded (the container never started)`);
    engine ??= create();
    let text = "";
    await readEngine(attempt, { tailLines: tail }, await engine, new AbortController().signal, (chunk) => (text += chunk));
    return text;
  };
}

async function readEngine(attempt: AttemptRow, query: { tailLines?: number; follow?: boolean }, engine: EngineLogs, signal: AbortSignal, onText: (text: string) => void): Promise<void> {
  const utf8 = new StringDecoder("utf8");
  try {
    await writeEngineLogs(attempt, query, { signal, engine: async () => engine }, (bytes) => {
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
