/**
 * dockerode over the fetch transport, against a small engine on a unix socket that this test
 * serves: answers keep docker-modem's shapes, chunked bodies arrive whole, an engine that never
 * answers costs the deadline and not a stalled caller, and streams are not cut by it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Dockerode from "dockerode";
import { dockerMessage, isNotFound, isNotModified } from "../../src/runtime/docker/docker-errors.ts";
import { EngineTimeoutError, useFetchTransport } from "../../src/runtime/docker/docker-transport.ts";

let dir: string;
let server: ReturnType<typeof Bun.serve>;
let docker: Dockerode;
const seen: Array<{ method: string; path: string; body: string; contentType: string | null }> = [];
const BIG_NAME = "x".repeat(20_000);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "minikubelet-transport-"));
  const socketPath = join(dir, "engine.sock");
  server = Bun.serve({
    unix: socketPath,
    async fetch(request) {
      const url = new URL(request.url);
      seen.push({ method: request.method, path: `${url.pathname}${url.search}`, body: await request.text(), contentType: request.headers.get("content-type") });
      if (url.pathname === "/containers/json") {
        // A body well over 4 KiB sent in pieces: the engine's chunked answers look like this.
        const parts = [`[{"Id":"a","Names":["/${BIG_NAME.slice(0, 10_000)}`, `${BIG_NAME.slice(10_000)}"]}]`];
        return new Response(new ReadableStream({ async pull(c) { const part = parts.shift(); if (part === undefined) return c.close(); await Bun.sleep(5); c.enqueue(new TextEncoder().encode(part)); } }));
      }
      if (url.pathname === "/containers/missing/json") return Response.json({ message: "No such container: missing" }, { status: 404 });
      if (url.pathname === "/containers/started/start") return new Response(null, { status: 304 });
      if (url.pathname === "/containers/created/start") return new Response(null, { status: 204 });
      if (url.pathname === "/containers/create") return Response.json({ Id: "new-id", Warnings: [] }, { status: 201 });
      if (url.pathname === "/containers/hung/json") return new Promise<Response>(() => undefined);
      if (url.pathname === "/events") {
        // Events slower than the request deadline: a stream must outlive it. With filters, endless.
        const endless = url.searchParams.has("filters");
        let sent = 0;
        return new Response(new ReadableStream({ async pull(c) { await Bun.sleep(60); if (sent++ === 3 && !endless) return c.close(); c.enqueue(new TextEncoder().encode(`{"Action":"die","n":${sent}}\n`)); } }));
      }
      return new Response("page not found", { status: 404 });
    },
  });
  docker = useFetchTransport(new Dockerode({ socketPath }), { requestTimeoutMs: 100 });
});

afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

describe("dockerode over the fetch transport", () => {
  test("a chunked JSON body over 4 KiB arrives whole and parsed", async () => {
    const list = await docker.listContainers({ all: true, filters: { label: ["a=b"] } });
    expect(list[0]!.Names[0]).toBe(`/${BIG_NAME}`);
    expect(seen.at(-1)!.path).toBe(`/containers/json?all=true&filters=${encodeURIComponent('{"label":["a=b"]}')}`);
  });

  test("a POST sends docker-modem's JSON body and answers with the engine's JSON", async () => {
    const created = await docker.createContainer({ Image: "busybox", Labels: { app: "web" } });
    expect(created.id).toBe("new-id");
    const request = seen.at(-1)!;
    expect(request.method).toBe("POST");
    expect(request.contentType).toBe("application/json");
    expect(JSON.parse(request.body)).toEqual({ Image: "busybox", Labels: { app: "web" } });
  });

  test("statuses keep docker-modem's meaning: 204 is success, 304 and 404 are errors with statusCode and json", async () => {
    await docker.getContainer("created").start();
    const notModified = await docker.getContainer("started").start().catch((e: unknown) => e);
    expect(isNotModified(notModified)).toBe(true);
    const missing = await docker.getContainer("missing").inspect().catch((e: unknown) => e);
    expect(isNotFound(missing)).toBe(true);
    expect(dockerMessage(missing)).toBe("No such container: missing");
    expect((missing as Error).message).toBe("(HTTP code 404) no such container - No such container: missing ");
  });

  test("a call the engine never answers fails at the deadline", async () => {
    const started = performance.now();
    const error = await docker.getContainer("hung").inspect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineTimeoutError);
    expect((error as Error).message).toBe("the engine did not answer GET /containers/hung/json within 0.1s");
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  test("a stream lives past the request deadline and destroy() ends it", async () => {
    const stream = await docker.getEvents();
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      stream.on("data", (chunk: Buffer) => lines.push(chunk.toString().trim()));
      stream.on("end", resolve);
      stream.on("error", reject);
    });
    expect(lines).toEqual(['{"Action":"die","n":1}', '{"Action":"die","n":2}', '{"Action":"die","n":3}']);
    const second = (await docker.getEvents()) as NodeJS.ReadableStream & { destroy(): void };
    const closed = new Promise((resolve) => second.on("close", resolve));
    second.destroy();
    await closed;
  });

  test("the caller's abort signal ends a stream it has already received", async () => {
    const abort = new AbortController();
    const stream = await docker.getEvents({ filters: { type: ["container"] }, abortSignal: abort.signal });
    const ended = new Promise<string>((resolve) => {
      stream.on("close", () => resolve("closed"));
      stream.on("error", () => resolve("closed"));
    });
    stream.resume();
    await Bun.sleep(300);
    abort.abort();
    expect(await Promise.race([ended, Bun.sleep(1_000).then(() => "still open")])).toBe("closed");
  });

  test("installing twice wraps once", () => {
    const modem = (docker as unknown as { modem: { buildRequest: unknown } }).modem;
    const before = modem.buildRequest;
    useFetchTransport(docker);
    expect(modem.buildRequest).toBe(before);
  });
});
