/**
 * The API's bounds against a hostile client, on the real listener with routes of the test's own and
 * a fake clock: the handshake and first-head deadlines (counted from the accept, so a trickle of
 * bytes does not extend them), the bound on open connections, requests in flight (429 with
 * Retry-After; long-running ones not counted), the request timeout (504), and the per-client cap
 * on streams.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { connect as tcpConnect, type Socket } from "node:net";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { join } from "node:path";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import type { Route } from "../../src/api/http/http.ts";
import { startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const dir = tempDir("minikubelet-api-limits-");
const credentials = ensureCredentials(join(dir.path, "state.db"));
const clock = new FakeClock();
const db = new Database(":memory:");
/** Requests the /stuck route holds until the test lets them go (or their signal aborts). */
const held: (() => void)[] = [];

function stuck(request: { signal: AbortSignal }): Promise<Response> {
  return new Promise((resolve) => {
    const done = () => resolve(new Response("done"));
    held.push(done);
    request.signal.addEventListener("abort", done, { once: true });
  });
}

/** Streams one line, then stays open until the client leaves. */
function endless(): Response {
  return new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode("line\n")) }));
}

const routes: Route[] = [
  { method: "GET", path: "/stuck", handle: stuck },
  { method: "POST", path: "/stuck", handle: stuck },
  { method: "GET", path: "/fast", handle: () => new Response("ok") },
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods/:name/log", handle: endless },
  { method: "GET", path: "/api/v1/pods", handle: endless },
];

const limits = { ...DEFAULT_LIMITS, maxRequestsInflight: 2, maxMutatingRequestsInflight: 1, maxStreamsPerClient: 2, maxConnections: 40, tlsHandshakeTimeoutMs: 10_000, readHeaderTimeoutMs: 32_000, requestTimeoutMs: 60_000 };
let server: ApiServer;
let port: number;

beforeAll(() => {
  const context: ApiContext = { store: new StoreReader(db), dbPath: "", clock, nodeName: "lab", commits: new CommitBroadcast(), limits };
  server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context, routes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  for (const release of held) release();
  await server.stop();
  db.close();
  dir[Symbol.dispose]();
});

function call(path: string, init: RequestInit = {}) {
  return fetch(`${server.url}${path}`, { ...init, keepalive: false, headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as RequestInit);
}

/** Resolves true once `socket` closes, false if it is still open after `ms` of real time. */
function closesWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function bareTcp(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1", () => resolve(socket));
    socket.on("error", reject);
  });
}

function tls(): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ port, host: "127.0.0.1", ca: credentials.caPem, servername: "localhost", ALPNProtocols: ["http/1.1"] }, () => resolve(socket));
    socket.on("error", reject);
  });
}

/** Lets the server's side see what the client did (its accept, a byte) before the clock moves. */
async function untilServerHas(connections: number): Promise<void> {
  for (let i = 0; i < 200 && server.openConnections() !== connections; i++) await Bun.sleep(5);
  expect(server.openConnections()).toBe(connections);
}

test("a connection that never starts its TLS handshake is closed at the handshake deadline", async () => {
  const socket = await bareTcp();
  await untilServerHas(1);
  clock.step(limits.tlsHandshakeTimeoutMs - 1);
  expect(await closesWithin(socket, 50)).toBe(false);
  clock.step(1);
  expect(await closesWithin(socket, 1000)).toBe(true);
  await untilServerHas(0);
});

test("a head sent a byte at a time is cut at the deadline counted from the accept, not kept by each byte", async () => {
  const socket = await tls();
  await untilServerHas(1);
  const head = "GET /fast HTTP/1.1\r\nHost: localhost\r\n";
  // A byte every 4 s: an idle timer of any length above that would never fire.
  for (let sent = 0; sent < 7; sent++) {
    socket.write(head[sent]!);
    await Bun.sleep(5);
    clock.step(4_000);
  }
  expect(await closesWithin(socket, 50)).toBe(false);
  clock.step(limits.readHeaderTimeoutMs - 7 * 4_000);
  expect(await closesWithin(socket, 1000)).toBe(true);
  await untilServerHas(0);
});

test("a whole head in time is served, and no deadline of its accept cuts it later", async () => {
  const socket = await tls();
  socket.write("GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n");
  const answer = await new Promise<string>((resolve) => socket.once("data", (chunk) => resolve(chunk.toString())));
  expect(answer).toStartWith("HTTP/1.1 401");
  clock.step(limits.readHeaderTimeoutMs * 2);
  expect(await closesWithin(socket, 50)).toBe(false);
  socket.destroy();
  await untilServerHas(0);
});

test("past --max-connections a new connection is closed as it is accepted, and served again once one leaves", async () => {
  const open = await Promise.all(Array.from({ length: limits.maxConnections }, () => bareTcp()));
  await untilServerHas(limits.maxConnections);
  const refused = await bareTcp();
  expect(await closesWithin(refused, 1000)).toBe(true);
  expect(server.openConnections()).toBe(limits.maxConnections);
  open.pop()!.destroy();
  await untilServerHas(limits.maxConnections - 1);
  expect((await call("/fast")).status).toBe(200);
  for (const socket of open) socket.destroy();
  await untilServerHas(0);
});

test("past --max-requests-inflight a read is a 429 with Retry-After; writes count apart; long-running requests not at all", async () => {
  const reads = [call("/stuck"), call("/stuck")];
  const write = call("/stuck", { method: "POST" });
  for (let i = 0; i < 200 && held.length < 3; i++) await Bun.sleep(5);
  expect(held.length).toBe(3);
  const refused = await call("/fast");
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBe("1");
  expect(await refused.json()).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "Too many requests, please try again later.", reason: "TooManyRequests", code: 429, details: { retryAfterSeconds: 1 } });
  expect((await call("/stuck", { method: "POST" })).status).toBe(429);
  // A followed log is long-running: it is served with every slot taken.
  const leave = new AbortController();
  const follow = await call("/api/v1/namespaces/default/pods/web/log?follow=true", { signal: leave.signal });
  expect(follow.status).toBe(200);
  leave.abort();
  for (const release of held.splice(0)) release();
  expect((await Promise.all([...reads, write])).map((response) => response.status)).toEqual([200, 200, 200]);
  expect((await call("/fast")).status).toBe(200);
});

test("a request that is not long-running and has no answer by --request-timeout is a 504 Timeout Status, and its handler told to stop", async () => {
  const answer = call("/stuck");
  for (let i = 0; i < 200 && held.length < 1; i++) await Bun.sleep(5);
  clock.step(limits.requestTimeoutMs);
  const response = await answer;
  expect(response.status).toBe(504);
  expect(await response.json()).toMatchObject({ kind: "Status", code: 504, reason: "Timeout", message: "Timeout: request did not complete within requested timeout - context deadline exceeded" });
  held.splice(0);
  expect((await call("/fast")).status).toBe(200);
});

test("past --max-streams-per-client a client's next watch or followed log is a 429; one ended frees its slot", async () => {
  // The earlier tests' streams released: their connections are gone.
  await untilServerHas(0);
  const streams: AbortController[] = [];
  const stream = (path: string) => {
    const client = new AbortController();
    streams.push(client);
    return call(path, { signal: client.signal });
  };
  const first = await stream("/api/v1/namespaces/default/pods/web/log?follow=true");
  const second = await stream("/api/v1/pods?watch=true");
  expect([first.status, second.status]).toEqual([200, 200]);
  const third = await call("/api/v1/namespaces/default/pods/web/log?follow=1");
  expect(third.status).toBe(429);
  expect(third.headers.get("retry-after")).toBe("1");
  expect(await third.json()).toMatchObject({ reason: "TooManyRequests", code: 429 });
  // A log that is not followed is no stream.
  expect((await stream("/api/v1/namespaces/default/pods/web/log")).status).toBe(200);
  streams[0]!.abort();
  let again: Response | undefined;
  for (let i = 0; i < 100; i++) {
    again = await stream("/api/v1/pods?watch=true");
    if (again.status === 200) break;
    await Bun.sleep(10);
  }
  expect(again!.status).toBe(200);
  for (const client of streams) client.abort();
  await untilServerHas(0);
});
