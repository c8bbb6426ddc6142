/**
 * `pods/NAME/portforward` driven as the server drives it: the route's handler with kubectl's
 * upgrade requests (SPDY for 1.27 to 1.30, the WebSocket tunnel for 1.31+) and the client
 * libraries' (the WebSocket channel protocol, ports in the query), on the fake runtime and a real
 * database; then the session it upgraded to on a real SPDY connection over loopback, to see where
 * its connections are dialled. The channel protocol's wire is portforward-websocket.test.ts's.
 */
import { afterEach, expect, test } from "bun:test";
import { createServer } from "node:net";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import type { ApiRequest, SpdySession, WebSocketSession } from "../../src/api/http/http.ts";
import { portForwardRoutes } from "../../src/api/portforward/portforward-api.ts";
import { acceptSpdy, type SpdyConnection } from "../../src/api/http/spdy.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { openSessionCount } from "../../src/api/streaming/streaming.ts";
import { apiContext } from "../api-objects-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { podPort } from "../pod-ports.ts";
import { PortForwardClient } from "../portforward-client.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

/** An agent with pod web-lab running on the fake runtime, and the API's context over its database. */
async function agent(options: { runtime?: boolean; maxPortForwardSessions?: number } = {}) {
  const dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const api = apiContext(h.dbPath, h.clock, {
    ...(options.runtime !== false && { runtime: h.runtime }),
    limits: { maxPortForwardSessions: options.maxPortForwardSessions ?? DEFAULT_LIMITS.maxPortForwardSessions },
  });
  cleanups.push(() => {
    api[Symbol.dispose]();
    h.agent.close();
    dir[Symbol.dispose]();
  });
  return { h, api };
}

const SPDY = { Upgrade: "SPDY/3.1", Connection: "Upgrade", "X-Stream-Protocol-Version": "portforward.k8s.io" };
const TUNNEL = { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Protocol": "SPDY/3.1+portforward.k8s.io" };
/** What python's kubernetes client sends (client-node offers v5 to channel.k8s.io). */
const CHANNELS = { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Protocol": "v4.channel.k8s.io" };

/** kubectl's request (POST for SPDY, GET for the tunnel); what it was upgraded to, or the Status it got. */
async function call(
  api: ApiContext,
  options: { method?: "GET" | "POST"; pod?: string; headers?: Record<string, string>; query?: string } = {},
): Promise<{ response?: Response; error?: ApiError; spdy?: SpdySession; webSocket?: WebSocketSession }> {
  const method = options.method ?? "POST";
  const name = options.pod ?? "web-lab";
  const url = new URL(`https://127.0.0.1/api/v1/namespaces/demo/pods/${name}/portforward${options.query ? `?${options.query}` : ""}`);
  const upgraded: { spdy?: SpdySession; webSocket?: WebSocketSession } = {};
  const request: ApiRequest = {
    method,
    url,
    headers: new Headers(options.headers ?? (method === "POST" ? SPDY : TUNNEL)),
    params: { namespace: "demo", name },
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new Uint8Array(),
    upgrade: (session) => void (upgraded.webSocket = session),
    upgradeSpdy: (session) => void (upgraded.spdy = session),
  };
  try {
    return { response: await portForwardRoutes.find((route) => route.method === method)!.handle(request, api), ...upgraded };
  } catch (error) {
    if (error instanceof ApiError) return { error, ...upgraded };
    throw error;
  }
}

/** A connection that never opens a stream; `close()` is the client leaving. */
function idleConnection(): SpdyConnection & { close(): void } {
  const onClose: (() => void)[] = [];
  return { onStream() {}, onClose: (handler) => void onClose.push(handler), finish() {}, end() {}, close: () => onClose.forEach((handler) => handler()) };
}

test("kubectl 1.27's SPDY upgrade gets portforward.k8s.io, kubectl 1.33's WebSocket the tunnelled protocol", async () => {
  const { api } = await agent();
  const spdy = await call(api);
  expect(spdy.response?.status).toBe(101);
  expect(spdy.spdy?.protocol).toBe("portforward.k8s.io");
  const tunnel = await call(api, { method: "GET" });
  expect(tunnel.response?.status).toBe(101);
  expect(tunnel.webSocket?.protocol).toBe("SPDY/3.1+portforward.k8s.io");
});

test("the client libraries' WebSocket gets the kubelet's channel protocol: the first of the offer it serves, in the client's order", async () => {
  const { api } = await agent();
  const protocolFor = async (offer: string | undefined) => {
    const headers: Record<string, string> = { ...CHANNELS };
    if (offer === undefined) delete headers["Sec-WebSocket-Protocol"];
    else headers["Sec-WebSocket-Protocol"] = offer;
    const { response, webSocket, error } = await call(api, { method: "GET", headers, query: "ports=80" });
    if (error) throw error;
    expect(response?.status).toBe(101);
    return webSocket!.protocol;
  };
  expect(await protocolFor("v4.channel.k8s.io")).toBe("v4.channel.k8s.io");
  expect(await protocolFor("v5.channel.k8s.io, v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io")).toBe("v4.channel.k8s.io");
  expect(await protocolFor("v4.base64.channel.k8s.io,v4.channel.k8s.io")).toBe("v4.base64.channel.k8s.io");
  expect(await protocolFor(undefined)).toBe("");
  // Offered beside the channel protocol, the tunnel wins, as the API server checks for it first.
  expect(await protocolFor("v4.channel.k8s.io, SPDY/3.1+portforward.k8s.io")).toBe("SPDY/3.1+portforward.k8s.io");
});

test("the ports query: the API server's conversion for every request, the kubelet's checks for the channel protocol, in their words", async () => {
  const { api } = await agent();
  const refusal = async (query: string, headers: Record<string, string> = CHANNELS) => (await call(api, { method: headers === SPDY ? "POST" : "GET", headers, query })).error?.toStatus();
  const converted = (item: string, problem: string) => `cannot convert to []int32: strconv.ParseUint: parsing "${item}": ${problem}`;
  expect(await refusal("ports=http")).toMatchObject({ code: 400, reason: "BadRequest", message: converted("http", "invalid syntax") });
  expect(await refusal("ports=80,")).toMatchObject({ code: 400, message: converted("", "invalid syntax") });
  expect(await refusal("ports=80&ports=70000")).toMatchObject({ code: 400, message: converted("70000", "value out of range") });
  expect(await refusal("ports=-1", SPDY)).toMatchObject({ code: 400, message: converted("-1", "invalid syntax") });
  // The API server hands the kubelet one `port` value: its messages name `port` and quote them all.
  expect(await refusal("")).toMatchObject({ code: 400, reason: "BadRequest", message: 'query parameter "port" is required' });
  expect(await refusal("ports=8080&ports=0")).toMatchObject({ code: 400, message: 'port "8080,0" must be > 0' });
  const tooMany = Array.from({ length: 129 }, (_, i) => i + 1).join(",");
  expect(await refusal(`ports=${tooMany}`)).toMatchObject({ code: 400, message: "too many ports to forward on one WebSocket: 129 (limit 128: each port takes two of its 256 channel numbers)" });
  // SPDY's streams name their ports: the kubelet reads none from the query, so none is required.
  expect(await refusal("", SPDY)).toBeUndefined();
  expect(await refusal("ports=0", TUNNEL)).toBeUndefined();
  expect(await refusal(`ports=${Array.from({ length: 128 }, () => "1").join(",")}`)).toBeUndefined();
  expect(await refusal("ports=080")).toBeUndefined();
});

test("each forwarded connection is dialled where the runtime says for the pod's sandbox", async () => {
  const { h, api } = await agent();
  const web = await podPort("web");
  cleanups.push(() => web.close());
  const { spdy } = await call(api);
  const server = createServer((socket) => spdy!.open(acceptSpdy(socket, h.clock)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = await PortForwardClient.dial((server.address() as { port: number }).port);
  cleanups.push(() => {
    client.close();
    server.close();
  });
  expect(await client.exchange(web.port, "0", "hello")).toEqual({ data: "web:hello", error: "" });
  const sandbox = [...h.runtime.sandboxes.values()][0]!;
  expect(h.runtime.calls.filter((called) => called.startsWith("port-forward"))).toEqual([`port-forward ${sandbox.id} ${web.port}`]);
});

test("sessions beyond maxPortForwardSessions get 429 until one ends, whatever their protocol; exec's sessions are counted apart", async () => {
  const { api } = await agent({ maxPortForwardSessions: 1 });
  const first = await call(api);
  const connection = idleConnection();
  first.spdy!.open(connection);
  expect(openSessionCount(api, "port-forward")).toBe(1);
  expect(openSessionCount(api, "exec")).toBe(0);
  const refused = await call(api, { method: "GET" });
  expect(refused.response?.status).toBe(429);
  expect(await refused.response?.json()).toMatchObject({ reason: "TooManyRequests", message: "too many port-forward sessions open (limit 1); try again later" });
  expect((await call(api, { method: "GET", headers: CHANNELS, query: "ports=80" })).response?.status).toBe(429);
  connection.close();
  expect(openSessionCount(api, "port-forward")).toBe(0);
  const channels = await call(api, { method: "GET", headers: CHANNELS, query: "ports=80" });
  expect(channels.response?.status).toBe(101);
  expect(openSessionCount(api, "port-forward")).toBe(1);
  channels.webSocket!.close({ send: () => 0, sendText: () => 0, close: () => {} }, 1000, "");
  expect(openSessionCount(api, "port-forward")).toBe(0);
});

test("refusals before the upgrade are Status errors kubectl prints", async () => {
  const { h, api } = await agent();
  const expectError = (result: Awaited<ReturnType<typeof call>>, code: number, reason: string, message: string) => {
    expect(result.spdy ?? result.webSocket).toBeUndefined();
    expect(result.error?.toStatus()).toMatchObject({ code, reason, message });
  };
  expectError(await call(api, { pod: "nope" }), 404, "NotFound", 'pods "nope" not found');
  expectError(
    await call(api, { headers: {} }),
    400,
    "BadRequest",
    "port-forward needs a connection upgrade: to websocket (SPDY/3.1+portforward.k8s.io, v4.channel.k8s.io, v4.base64.channel.k8s.io) or SPDY/3.1 (portforward.k8s.io)",
  );
  expectError(await call(api, { headers: { ...SPDY, "X-Stream-Protocol-Version": "v4.channel.k8s.io" } }), 400, "BadRequest", "requested protocol(s) are not supported: v4.channel.k8s.io; supports portforward.k8s.io");
  // exec's v5 and the unversioned channel protocols are not the kubelet's port-forward ones.
  expectError(
    await call(api, { method: "GET", headers: { ...CHANNELS, "Sec-WebSocket-Protocol": "v5.channel.k8s.io, channel.k8s.io" }, query: "ports=80" }),
    400,
    "BadRequest",
    "requested protocol(s) are not supported: v5.channel.k8s.io, channel.k8s.io; supports SPDY/3.1+portforward.k8s.io, v4.channel.k8s.io, v4.base64.channel.k8s.io",
  );
  const uid = [...h.runtime.sandboxes.values()][0]!.podUid;
  h.runtime.sandboxes.clear();
  expectError(await call(api), 500, "InternalError", `failed to find sandboxID for pod web-lab_demo(${uid})`);
  expectError(await call(api, { method: "GET", headers: CHANNELS, query: "ports=80" }), 500, "InternalError", `failed to find sandboxID for pod web-lab_demo(${uid})`);
  expect(openSessionCount(api, "port-forward")).toBe(0);
});

test("under serve (no runtime) the answer is exec's 503, naming port-forward", async () => {
  const { api } = await agent({ runtime: false });
  const { error } = await call(api);
  expect(error?.toStatus()).toMatchObject({
    code: 503,
    reason: "ServiceUnavailable",
    message: "port-forward needs the running agent: `minikubelet serve` only reads the database (start the pods with `minikubelet run`)",
  });
});
