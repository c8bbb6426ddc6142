/**
 * `logs` for attempts the docker runtime ran: the engine keeps their output (no log file is
 * recorded), so it is read through the DockerRuntime by the attempt's runtime id. The runtime (and
 * dockerode) is loaded only when such an attempt is asked for, so `logs` on a process-runtime
 * database never touches the docker socket.
 */
import type { AttemptRow } from "../store/queries.ts";
import type { DockerRuntime } from "../runtime/docker.ts";
import { UserError } from "./cli.ts";
import type { LogReader } from "./logs.ts";

/** Streams an attempt's output from the engine until it stops or the signal aborts (`logs -f`). */
export type LogFollower = (attempt: AttemptRow, tail: number | undefined, onText: (text: string) => void, signal: AbortSignal) => Promise<void>;

export function dockerLogFollower(create?: () => Promise<DockerRuntime>): LogFollower {
  const make = create ?? (async () => new (await import("../runtime/docker.ts")).DockerRuntime());
  return async (attempt, tail, onText, signal) => {
    const what = `logs of container "${attempt.container}" attempt ${attempt.attempt}`;
    if (!attempt.runtimeId) throw new UserError(`${what}: no runtime id is recorded (the container never started)`);
    const runtime = await make();
    try {
      await runtime.followLogs(attempt.runtimeId, tail === undefined ? {} : { tail }, onText, signal);
    } catch (error) {
      throw new UserError(`${what}: docker container ${attempt.runtimeId.slice(0, 12)}: ${(error as Error).message}`, { cause: error });
    } finally {
      await runtime.close();
    }
  };
}

/** A LogReader over the engine at DOCKER_HOST (or the default socket), connected on first use. */
export function dockerLogReader(create?: () => Promise<DockerRuntime>): LogReader {
  let runtime: Promise<DockerRuntime> | undefined;
  const make = create ?? (async () => new (await import("../runtime/docker.ts")).DockerRuntime());
  return async (attempt: AttemptRow) => {
    const what = `logs of container "${attempt.container}" attempt ${attempt.attempt}`;
    if (!attempt.runtimeId) throw new UserError(`${what}: no runtime id is recorded (the container never started)`);
    runtime ??= make();
    try {
      return await (await runtime).readLogs(attempt.runtimeId);
    } catch (error) {
      throw new UserError(`${what}: docker container ${attempt.runtimeId.slice(0, 12)}: ${(error as Error).message}`, { cause: error });
    }
  };
}
