/**
 * A container's output from the engine's logs endpoint, read with Bun's fetch alone: the query, the
 * 8-byte frame headers, and the two failures a reader tells apart (no such container, no engine).
 * DockerRuntime streams logs through it, and `minikubelet logs` reads the engine with it without
 * loading dockerode, whose start-up (docker-modem, ssh2, tar-fs: 150-250 ms) cost a `logs --tail 2`
 * ten times what the engine takes to answer.
 */
import { accessSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { EngineUnreachableError, fetchConnectionError } from "./docker-errors.ts";
import { FrameTextDecoder } from "./docker-frames.ts";
import type { LogOptions } from "../runtime.ts";

/** An engine reached over plain HTTP: its unix socket, or its host and port. */
export type EngineAddress = { socketPath: string } | { host: string; port: number };

/**
 * The engine DOCKER_HOST names, found as docker-modem finds it (no DOCKER_HOST: the user's
 * ~/.docker/run/docker.sock if there is one, else /var/run/docker.sock). Undefined for what only
 * docker-modem speaks (TLS, ssh, a path prefix, a named pipe) or a tcp address without a port.
 */
export function engineAddressFromEnv(env: NodeJS.ProcessEnv = process.env): EngineAddress | undefined {
  const dockerHost = env.DOCKER_HOST;
  if (!dockerHost) return { socketPath: defaultUnixSocket(env.HOME || homedir()) };
  if (dockerHost.startsWith("unix://")) return { socketPath: dockerHost.slice("unix://".length) || defaultUnixSocket(env.HOME || homedir()) };
  if (dockerHost.startsWith("npipe://") || env.DOCKER_PATH_PREFIX || env.DOCKER_TLS_VERIFY === "1") return undefined;
  let url: URL;
  try {
    url = new URL(dockerHost.includes("//") ? dockerHost : `tcp://${dockerHost}`);
  } catch {
    return undefined;
  }
  if (url.protocol !== "tcp:" && url.protocol !== "http:") return undefined;
  if (!url.port || url.port === "2376") return undefined;
  return { host: url.hostname, port: Number(url.port) };
}

function defaultUnixSocket(home: string): string {
  const userSocket = join(home, ".docker", "run", "docker.sock");
  try {
    accessSync(userSocket);
    return userSocket;
  } catch {
    return "/var/run/docker.sock";
  }
}

/** The address as error messages name it. */
export function describeEngineAddress(address: EngineAddress): string {
  return "socketPath" in address ? address.socketPath : `${address.host}:${address.port}`;
}

/**
 * Streams container `id`'s output (without `follow`, up to now) to `onText`, chunk by chunk; a
 * promise `onText` returns holds the next read back. `opened` is called once the engine has
 * accepted the request (an error after it comes mid-stream). Ends quietly when `signal` aborts.
 */
export async function streamEngineLogs(
  address: EngineAddress,
  id: string,
  options: LogOptions & { follow: boolean },
  onText: (text: string) => void | Promise<void>,
  signal: AbortSignal,
  opened?: () => void,
): Promise<void> {
  if (signal.aborted) return;
  const query = new URLSearchParams({
    stdout: "1",
    stderr: "1",
    follow: options.follow ? "1" : "0",
    timestamps: options.timestamps ? "1" : "0",
    tail: options.tail === undefined ? "all" : String(options.tail),
  });
  // The engine takes fractional seconds: the kubelet's sinceTime keeps its milliseconds.
  if (options.sinceMs !== undefined) query.set("since", (options.sinceMs / 1000).toFixed(9));
  const path = `/containers/${encodeURIComponent(id)}/logs?${query}`;
  const local = "socketPath" in address;
  let response: Response;
  try {
    response = await fetch(local ? `http://localhost${path}` : `http://${address.host}:${address.port}${path}`, {
      signal,
      ...(local && { unix: address.socketPath }),
    } as RequestInit);
  } catch (error) {
    if (signal.aborted) return;
    throw new EngineUnreachableError(describeEngineAddress(address), fetchConnectionError(error));
  }
  if (response.status === 404) {
    await response.body?.cancel();
    throw new Error(`logs of container ${id.slice(0, 12)}: no such container (removed)`);
  }
  if (!response.ok) throw new Error(`logs of container ${id.slice(0, 12)}: the engine answered ${response.status}: ${engineMessage(await response.text().catch(() => ""))}`);
  opened?.();
  if (!response.body) return;
  const decoder = new FrameTextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const text = decoder.write(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      if (text) await onText(text);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    reader.releaseLock();
  }
}

function engineMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    if (typeof message === "string") return message;
  } catch {
    // not JSON: the body as it came
  }
  return body.trim();
}
