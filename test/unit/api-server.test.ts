/**
 * The server's frame, with routes of the test's own: the token, path patterns, 404/405, errors as
 * Status (an unexpected one as a 500 without the server going down), the body bound, and the
 * request's signal when the client goes away.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { CommitBroadcast } from "../../src/api/commit-feed.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/context.ts";
import type { Route } from "../../src/api/http.ts";
import { startApiServer, type ApiServer } from "../../src/api/server.ts";
import { ApiError } from "../../src/api/status.ts";
import { ensureCredentials } from "../../src/api/tls.ts";
import { realClock } from "../../src/clock.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { tempDir } from "../store-fixtures.ts";
import { Database } from "bun:sqlite";

const dir = tempDir("minikubelet-api-server-");
const credentials = ensureCredentials(join(dir.path, "state.db"));
let aborted: Promise<unknown> = new Promise(() => {});
let markStreamStarted: () => void = () => {};
const streamStarted = new Promise<void>((resolve) => (markStreamStarted = resolve));

const routes: Route[] = [
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods/:name", handle: (request) => Response.json(request.params) },
  { method: "GET", path: "/boom", handle: () => { throw new TypeError("cannot read properties of undefined"); } },
  { method: "GET", path: "/gone", handle: () => { throw new ApiError(410, "Expired", "too old resource version: 1 (5)"); } },
  { method: "POST", path: "/echo", handle: async (request) => new Response(await request.body()) },
  {
    method: "GET",
    path: "/stream",
    handle(request) {
      aborted = new Promise((resolve) => request.signal.addEventListener("abort", resolve, { once: true }));
      markStreamStarted();
      const body = new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode("first\n")) });
      return new Response(body);
    },
  },
];

let server: ApiServer;
const db = new Database(":memory:");

beforeAll(() => {
  const context: ApiContext = { store: new StoreReader(db), dbPath: "", clock: realClock, nodeName: "lab", commits: new CommitBroadcast(), limits: { ...DEFAULT_LIMITS, maxBodyBytes: 1024 } };
  server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context, routes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
});

afterAll(async () => {
  await server.stop();
  db.close();
  dir[Symbol.dispose]();
});

function call(path: string, init: RequestInit & { token?: string | null } = {}) {
  const token = init.token === undefined ? credentials.token : init.token;
  const headers = new Headers(init.headers);
  if (token !== null) headers.set("Authorization", `Bearer ${token}`);
  return fetch(`${server.url}${path}`, { ...init, headers, tls: { ca: credentials.caPem } } as RequestInit);
}

test("the serving certificate is trusted through the CA for 127.0.0.1 and localhost", async () => {
  expect((await call("/api/v1/namespaces/default/pods/web")).status).toBe(200);
  const port = new URL(server.url).port;
  const viaName = await fetch(`https://localhost:${port}/api/v1/namespaces/a/pods/b`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as RequestInit);
  expect(viaName.status).toBe(200);
});

test("no token or a wrong one is a 401 Unauthorized Status", async () => {
  for (const token of [null, "wrong", `${credentials.token}x`]) {
    const response = await call("/api/v1/namespaces/default/pods/web", { token });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "Unauthorized", reason: "Unauthorized", code: 401 });
  }
});

test("a path pattern's :segments become params, percent-decoded", async () => {
  expect(await (await call("/api/v1/namespaces/demo/pods/web%2Dlab")).json()).toEqual({ namespace: "demo", name: "web-lab" });
});

test("an unknown path is 404 and a known one with another method 405, both as Status", async () => {
  const missing = await call("/api/v1/namespaces/demo/pods");
  expect(missing.status).toBe(404);
  expect(await missing.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: "the server could not find the requested resource", code: 404 });
  const wrongMethod = await call("/api/v1/namespaces/demo/pods/web", { method: "DELETE" });
  expect(wrongMethod.status).toBe(405);
  expect(await wrongMethod.json()).toMatchObject({ reason: "MethodNotAllowed", code: 405 });
});

test("an ApiError is its Status; anything else a 500 InternalError, and the server answers on", async () => {
  const gone = await call("/gone");
  expect(gone.status).toBe(410);
  expect(await gone.json()).toMatchObject({ reason: "Expired", message: "too old resource version: 1 (5)" });
  const boom = await call("/boom");
  expect(boom.status).toBe(500);
  expect(await boom.json()).toMatchObject({ reason: "InternalError", message: "Internal error occurred: cannot read properties of undefined", code: 500 });
  expect((await call("/api/v1/namespaces/a/pods/b")).status).toBe(200);
});

test("a body over the limit is refused with 413; one within it reaches the route", async () => {
  expect(await (await call("/echo", { method: "POST", body: "small" })).text()).toBe("small");
  const large = await call("/echo", { method: "POST", body: "x".repeat(4096) });
  expect(large.status).toBe(413);
});

test("an over-long URL is refused before any route", async () => {
  const response = await call(`/api/v1/namespaces/a/pods/${"x".repeat(10_000)}`);
  expect([414, 431]).toContain(response.status);
});

test("the request's signal aborts when the client goes away", async () => {
  const client = new AbortController();
  const response = await call("/stream", { signal: client.signal });
  const reader = response.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe("first\n");
  await streamStarted;
  client.abort();
  await aborted;
});
