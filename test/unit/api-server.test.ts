/**
 * The server's frame, with routes of the test's own: the token, path patterns, 404/405, errors as
 * Status (an unexpected one as a 500 without the server going down), the body bound, and the
 * request's signal when the client goes away.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import type { Route } from "../../src/api/http/http.ts";
import { infoRoutes } from "../../src/api/discovery/info.ts";
import { chooseSubprotocol, PUBLIC_INFO_PATHS, startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
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
  ...infoRoutes,
  { method: "GET", path: "/api/v1/namespaces/:namespace/pods/:name", handle: (request) => Response.json(request.params) },
  { method: "GET", path: "/boom", handle: () => { throw new TypeError("cannot read properties of undefined"); } },
  { method: "GET", path: "/gone", handle: () => { throw new ApiError(410, "Expired", "too old resource version: 1 (5)"); } },
  { method: "GET", path: "/stuck", handle: (request) => new Promise((resolve) => request.signal.addEventListener("abort", () => resolve(new Response("late")))) },
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

const sessionEvents: string[] = [];
routes.push({
  method: "GET",
  path: "/api/v1/namespaces/:namespace/pods/:name/exec",
  handle(request) {
    const protocol = chooseSubprotocol(request.headers, ["v5.channel.k8s.io", "v4.channel.k8s.io"]);
    if (!protocol) throw ApiError.badRequest("no supported subprotocol");
    const upgraded = request.upgrade({
      protocol,
      open: (socket) => void socket.send(new Uint8Array([1, ...new TextEncoder().encode(`hello ${request.params.name}`)])),
      message: (socket, data) => {
        if (new TextDecoder().decode(data) === "throw") throw new Error("a broken session");
        socket.send(new Uint8Array([1, ...data]));
      },
      close: (_socket, code) => void sessionEvents.push(`closed ${code}`),
    });
    return upgraded ?? new Response(null, { status: 101 });
  },
});

let server: ApiServer;
const db = new Database(":memory:");

beforeAll(() => {
  const context: ApiContext = { store: new StoreReader(db), dbPath: "", clock: realClock, nodeName: "lab", commits: new CommitBroadcast(), limits: { ...DEFAULT_LIMITS, maxBodyBytes: 1024 } };
  server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context, routes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, publicPaths: PUBLIC_INFO_PATHS, log: () => {} });
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

test("the bearer scheme is read in any case and the header trimmed, as the API server's token authenticator reads it", async () => {
  for (const header of [`bearer ${credentials.token}`, `BEARER ${credentials.token}`, ` Bearer ${credentials.token} `]) {
    expect((await call("/api/v1/namespaces/default/pods/web", { token: null, headers: { Authorization: header } })).status).toBe(200);
  }
  for (const header of [`Basic ${credentials.token}`, credentials.token, `Bearer  ${credentials.token}`]) {
    expect((await call("/api/v1/namespaces/default/pods/web", { token: null, headers: { Authorization: header } })).status).toBe(401);
  }
});

test("without a token only system:public-info-viewer's paths are served; a wrong token is refused there too", async () => {
  for (const path of ["/version", "/version/", "/healthz", "/livez", "/readyz"]) {
    expect({ path, status: (await call(path, { token: null })).status }).toEqual({ path, status: 200 });
    expect({ path, status: (await call(path, { token: "wrong" })).status }).toEqual({ path, status: 401 });
  }
  for (const path of ["/healthz/ping", "/readyz/log", "/api", "/api/v1/namespaces/default/pods/web"]) {
    expect({ path, status: (await call(path, { token: null })).status }).toEqual({ path, status: 401 });
  }
  expect((await call("/version", { token: null, method: "POST" })).status).toBe(401);
});

test("a path pattern's :segments become params, percent-decoded", async () => {
  expect(await (await call("/api/v1/namespaces/demo/pods/web%2Dlab")).json()).toEqual({ namespace: "demo", name: "web-lab" });
});

test("an unknown path is 404 and a known one with another method 405, both as Status", async () => {
  const missing = await call("/api/v1/namespaces/demo/pods");
  expect(missing.status).toBe(404);
  // NewGenericServerResponse always fills details, empty here: clients read details.name off them.
  expect(await missing.json()).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "NotFound", message: "the server could not find the requested resource", details: {}, code: 404 });
  const wrongMethod = await call("/api/v1/namespaces/demo/pods/web", { method: "DELETE" });
  expect(wrongMethod.status).toBe(405);
  expect(await wrongMethod.json()).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "MethodNotAllowed", message: "the server does not allow this method on the requested resource", details: {}, code: 405 });
});

test("an ApiError is its Status; anything else a 500 InternalError, and the server answers on", async () => {
  const gone = await call("/gone");
  expect(gone.status).toBe(410);
  expect(await gone.json()).toMatchObject({ reason: "Expired", message: "too old resource version: 1 (5)" });
  const boom = await call("/boom");
  expect(boom.status).toBe(500);
  // NewInternalError: the error is also the one cause.
  expect(await boom.json()).toMatchObject({ reason: "InternalError", message: "Internal error occurred: cannot read properties of undefined", details: { causes: [{ message: "cannot read properties of undefined" }] }, code: 500 });
  expect((await call("/api/v1/namespaces/a/pods/b")).status).toBe(200);
});

test("a body over the limit is a 413 Status, whether its length is declared or it comes chunked", async () => {
  expect(await (await call("/echo", { method: "POST", body: "small" })).text()).toBe("small");
  // The refused body is left unread on its connection: Bun's fetch would pool it regardless of the
  // answer's Connection: close (seen here under load), and the next test's request met the rest of this one.
  const declared = await call("/echo", { method: "POST", body: "x".repeat(1500), keepalive: false });
  expect(declared.status).toBe(413);
  // limitedReadBody's NewRequestEntityTooLargeError.
  const tooLarge = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "RequestEntityTooLarge", message: "Request entity too large: limit is 1024", code: 413 };
  expect(await declared.json()).toEqual(tooLarge);
  const chunked = await call("/echo", { method: "POST", body: new ReadableStream({ start: (controller) => (controller.enqueue(new Uint8Array(1500)), controller.close()) }), keepalive: false });
  expect(chunked.status).toBe(413);
  expect(chunked.headers.get("connection")).toBe("close");
  expect(await chunked.json()).toEqual(tooLarge);
});

test("an over-long URL and over-large headers are refused before any route", async () => {
  const longUrl = await call(`/api/v1/namespaces/a/pods/${"x".repeat(10_000)}`);
  expect(longUrl.status).toBe(414);
  expect(await longUrl.json()).toMatchObject({ kind: "Status", message: "the request URL is longer than 8192 bytes" });
  expect((await call("/api/v1/namespaces/a/pods/b", { headers: { "X-Padding": "x".repeat(20_000) } })).status).toBe(431);
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

test("an upgrade reaches the route's WebSocket session with the subprotocol it chose from the client's offer", async () => {
  const url = `${server.url.replace("https:", "wss:")}/api/v1/namespaces/default/pods/web/exec`;
  const socket = new WebSocket(url, { protocols: ["v4.channel.k8s.io", "v5.channel.k8s.io"], headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as never);
  socket.binaryType = "arraybuffer";
  const messages: string[] = [];
  const { promise: twoMessages, resolve } = Promise.withResolvers<void>();
  socket.onmessage = (event) => {
    const bytes = new Uint8Array(event.data as ArrayBuffer);
    messages.push(`${bytes[0]}:${new TextDecoder().decode(bytes.subarray(1))}`);
    if (messages.length === 2) resolve();
  };
  await new Promise((opened) => (socket.onopen = opened));
  expect(socket.protocol).toBe("v5.channel.k8s.io");
  socket.send(new TextEncoder().encode("ls"));
  await twoMessages;
  expect(messages).toEqual(["1:hello web", "1:ls"]);
  socket.close(1000);
  while (sessionEvents.length === 0) await Bun.sleep(5);
  expect(sessionEvents).toEqual(["closed 1000"]);
});

test("a plain request to an upgrading route is a 400 Status, and an upgrade without the token a 401", async () => {
  const plain = await call("/api/v1/namespaces/default/pods/web/exec", { headers: { "Sec-WebSocket-Protocol": "v5.channel.k8s.io" } });
  expect(plain.status).toBe(400);
  expect(await plain.json()).toMatchObject({ kind: "Status", reason: "BadRequest" });
  const url = `${server.url.replace("https:", "wss:")}/api/v1/namespaces/default/pods/web/exec`;
  const socket = new WebSocket(url, { protocols: ["v5.channel.k8s.io"], tls: { ca: credentials.caPem } } as never);
  const outcome = await new Promise<string>((settle) => {
    socket.onopen = () => settle("opened");
    socket.onerror = () => settle("refused");
  });
  expect(outcome).toBe("refused");
});

test("a session that throws ends its own socket with 1011; the server serves on", async () => {
  const url = `${server.url.replace("https:", "wss:")}/api/v1/namespaces/default/pods/broken/exec`;
  const socket = new WebSocket(url, { protocols: ["v5.channel.k8s.io"], headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as never);
  await new Promise((opened) => (socket.onopen = opened));
  const closed = new Promise<number>((resolve) => (socket.onclose = (event) => resolve(event.code)));
  socket.send(new TextEncoder().encode("throw"));
  expect(await closed).toBe(1011);
  expect((await call("/api/v1/namespaces/a/pods/b")).status).toBe(200);
});

test("stop ends even after a socket the server closed, and frees the port", async () => {
  const context: ApiContext = { store: new StoreReader(db), dbPath: "", clock: realClock, nodeName: "lab", commits: new CommitBroadcast(), limits: DEFAULT_LIMITS };
  const closing: Route = {
    method: "GET",
    path: "/close",
    handle: (request) => request.upgrade({ protocol: "", open: (socket) => socket.close(1000, "done"), message() {}, close() {} }) ?? new Response(null, { status: 101 }),
  };
  const own = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context, routes: [closing], tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
  const socket = new WebSocket(`${own.url.replace("https:", "wss:")}/close`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as never);
  const closedWith = await new Promise<number>((closed) => (socket.onclose = (event) => closed(event.code)));
  expect(closedWith).toBe(1000);
  await expect(own.stop()).resolves.toBeUndefined();
  // Freed: a new listener gets the very port (Bun.listen throws EADDRINUSE otherwise).
  const port = Number(new URL(own.url).port);
  const again = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
  expect(again.port).toBe(port);
  again.stop(true);
});

test("a stuck request and a client that never sends its body keep no other request waiting", async () => {
  const client = new AbortController();
  const stuck = call("/stuck", { signal: client.signal }).catch(() => undefined);
  const slowBody = new ReadableStream({ start: (controller) => controller.enqueue(new Uint8Array(10)) });
  const neverEnds = call("/echo", { method: "POST", body: slowBody, signal: client.signal }).catch(() => undefined);
  expect(await (await call("/api/v1/namespaces/a/pods/b")).json()).toEqual({ namespace: "a", name: "b" });
  client.abort();
  await Promise.all([stuck, neverEnds]);
});
