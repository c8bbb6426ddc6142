/**
 * The engine's logs read with fetch alone (src/runtime/docker/docker-logs.ts): where DOCKER_HOST points,
 * what is asked of the engine, and how its multiplexed answer and its errors come back. The engine
 * here is a small HTTP server on a unix socket answering as dockerd does; test/docker reads a real one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EngineUnreachableError } from "../../src/runtime/docker/docker-errors.ts";
import { engineAddressFromEnv, streamEngineLogs } from "../../src/runtime/docker/docker-logs.ts";
import { engineFrame as frame } from "../engine-frames.ts";

const dir = mkdtempSync(join(tmpdir(), "minikubelet-engine-logs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("engineAddressFromEnv", () => {
  test("DOCKER_HOST as docker-modem reads it: a unix socket, a tcp host and port", () => {
    expect(engineAddressFromEnv({ DOCKER_HOST: "unix:///run/user/docker.sock" })).toEqual({ socketPath: "/run/user/docker.sock" });
    expect(engineAddressFromEnv({ DOCKER_HOST: "tcp://127.0.0.1:2375" })).toEqual({ host: "127.0.0.1", port: 2375 });
    expect(engineAddressFromEnv({ DOCKER_HOST: "localhost:2375" })).toEqual({ host: "localhost", port: 2375 });
  });

  test("no DOCKER_HOST: the user's ~/.docker/run/docker.sock when there is one, else /var/run/docker.sock", () => {
    const home = join(dir, "home");
    expect(engineAddressFromEnv({ HOME: home })).toEqual({ socketPath: "/var/run/docker.sock" });
    mkdirSync(join(home, ".docker", "run"), { recursive: true });
    writeFileSync(join(home, ".docker", "run", "docker.sock"), "");
    expect(engineAddressFromEnv({ HOME: home })).toEqual({ socketPath: join(home, ".docker", "run", "docker.sock") });
    expect(engineAddressFromEnv({ HOME: home, DOCKER_HOST: "unix://" })).toEqual({ socketPath: join(home, ".docker", "run", "docker.sock") });
  });

  test("what only docker-modem speaks has no address: TLS, ssh, a path prefix, a named pipe, no port", () => {
    for (const env of [
      { DOCKER_HOST: "tcp://10.0.0.1:2376" },
      { DOCKER_HOST: "tcp://10.0.0.1:2375", DOCKER_TLS_VERIFY: "1" },
      { DOCKER_HOST: "ssh://me@host" },
      { DOCKER_HOST: "tcp://10.0.0.1:2375", DOCKER_PATH_PREFIX: "/docker" },
      { DOCKER_HOST: "npipe:////./pipe/docker_engine" },
      { DOCKER_HOST: "tcp://10.0.0.1" },
    ]) {
      expect(engineAddressFromEnv(env), JSON.stringify(env)).toBeUndefined();
    }
  });
});

describe("streamEngineLogs against an engine on a unix socket", () => {
  const socketPath = join(dir, "engine.sock");
  const asked: URL[] = [];
  const engine = Bun.serve({
    unix: socketPath,
    fetch(request) {
      const url = new URL(request.url);
      asked.push(url);
      if (url.pathname === "/containers/gone/logs") return Response.json({ message: "No such container: gone" }, { status: 404 });
      if (url.pathname === "/containers/broken/logs") return Response.json({ message: "configured logging driver does not support reading" }, { status: 501 });
      // The frames cut mid-header and mid-character, as the engine's chunks may be.
      const bytes = Buffer.concat([frame(1, "out one\n"), frame(2, "err é\n"), frame(1, "out two\n")]);
      let offset = 0;
      const chunks = [3, 11, 21, bytes.length].map((end) => {
        const chunk = bytes.subarray(offset, end);
        offset = end;
        return chunk;
      });
      return new Response(new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }));
    },
  });
  afterAll(() => engine.stop(true));

  test("asks for both streams with the kubelet's options, and decodes the frames across chunks", async () => {
    let text = "";
    await streamEngineLogs({ socketPath }, "abc123", { follow: false, tail: 2, timestamps: true, sinceMs: 1_700_000_000_250 }, (chunk) => void (text += chunk), new AbortController().signal);
    expect(text).toBe("out one\nerr é\nout two\n");
    const url = asked.at(-1)!;
    expect(url.pathname).toBe("/containers/abc123/logs");
    expect(Object.fromEntries(url.searchParams)).toEqual({ stdout: "1", stderr: "1", follow: "0", timestamps: "1", tail: "2", since: "1700000000.250000000" });
  });

  test("no tail is every line: the engine's `all`", async () => {
    await streamEngineLogs({ socketPath }, "abc123", { follow: true }, () => {}, new AbortController().signal);
    expect(asked.at(-1)!.searchParams.get("tail")).toBe("all");
    expect(asked.at(-1)!.searchParams.get("follow")).toBe("1");
  });

  test("a removed container, and any other refusal, in words; nothing is opened", async () => {
    let opened = false;
    const gone = await streamEngineLogs({ socketPath }, "gone", { follow: false }, () => {}, new AbortController().signal, () => (opened = true)).catch((e: Error) => e.message);
    expect(gone).toBe("logs of container gone: no such container (removed)");
    const broken = await streamEngineLogs({ socketPath }, "broken", { follow: false }, () => {}, new AbortController().signal).catch((e: Error) => e.message);
    expect(broken).toBe("logs of container broken: the engine answered 501: configured logging driver does not support reading");
    expect(opened).toBe(false);
  });

  test("no engine behind the socket: EngineUnreachableError naming it", async () => {
    const missing = join(dir, "nobody.sock");
    const error = await streamEngineLogs({ socketPath: missing }, "abc", { follow: false }, () => {}, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineUnreachableError);
    expect((error as Error).message).toBe(`docker engine at ${missing} is unreachable: connection failed (FailedToOpenSocket)`);
  });
});

test("`logs` of a docker attempt with DOCKER_HOST on TLS: one line saying so, no dockerode", async () => {
  const { dockerLogReader } = await import("../../src/cli/logs/docker-log-reader.ts");
  const saved = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = "tcp://10.0.0.1:2376";
  try {
    const attempt = { container: "web", attempt: 0, runtimeId: "abc" } as Parameters<ReturnType<typeof dockerLogReader>>[0];
    const message = await dockerLogReader()(attempt).catch((e: Error) => e.message);
    expect(message).toBe("logs: the engine at DOCKER_HOST=tcp://10.0.0.1:2376 is reached over TLS or ssh, which logs does not read from");
  } finally {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  }
});
