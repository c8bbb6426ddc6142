/**
 * The server's SPDY/3.1 upgrade (kubectl 1.27 to 1.29's exec) over real TLS: a route that upgrades
 * answers 101 with the session's protocol and gets the streams a client opens; a refusal before it
 * (no token, unknown path) is the usual Status, written on the raw connection; and the connection
 * that asked for no SPDY is served by Bun.serve as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { Duplex } from "node:stream";
import { readFileSync } from "node:fs";
import { connect, type TLSSocket } from "node:tls";
// @ts-expect-error spdy-transport ships no types
import transport from "spdy-transport";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import type { Route } from "../../src/api/http/http.ts";
import { startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { realClock } from "../../src/clock.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { tempDir } from "../store-fixtures.ts";

const dir = tempDir("minikubelet-api-spdy-");
const credentials = ensureCredentials(join(dir.path, "state.db"));
const db = new Database(":memory:");

const routes: Route[] = [
  { method: "GET", path: "/plain", handle: () => new Response("plain") },
  {
    method: "POST",
    path: "/api/v1/namespaces/:namespace/pods/:name/exec",
    handle: (request) =>
      request.upgradeSpdy?.({
        protocol: "v4.channel.k8s.io",
        open(connection) {
          connection.onStream((stream) => {
            stream.respond(200, {});
            stream.end(`hello ${stream.headers["streamtype"]}`);
          });
        },
      }) ?? new Response(null, { status: 101 }),
  },
];

let server: ApiServer;
beforeAll(() => {
  const context: ApiContext = { store: new StoreReader(db), dbPath: "", clock: realClock, nodeName: "lab", commits: new CommitBroadcast(), limits: DEFAULT_LIMITS };
  server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context, routes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
});

afterAll(async () => {
  await server.stop();
  db.close();
  dir[Symbol.dispose]();
});

/** Sends a SPDY upgrade request; resolves with the response head and the socket, positioned after it. */
async function upgrade(path: string, token = credentials.token): Promise<{ head: string; socket: TLSSocket }> {
  const url = new URL(server.url);
  const socket = connect({ host: url.hostname, port: Number(url.port), ca: credentials.caPem, servername: "localhost" });
  await new Promise((resolve) => socket.once("secureConnect", resolve));
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`);
  let received = Buffer.alloc(0);
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      socket.off("data", onData);
      socket.pause();
      const rest = received.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve({ head: received.subarray(0, end + 4).toString(), socket });
    };
    socket.on("data", onData);
  });
}

async function bodyAfter(socket: TLSSocket): Promise<string> {
  let body = "";
  socket.on("data", (chunk) => (body += chunk));
  socket.resume();
  await new Promise((resolve) => socket.once("close", resolve));
  return body;
}

test("a SPDY upgrade is answered 101 with the session's protocol, and the streams the client opens reach the session", async () => {
  const { head, socket } = await upgrade("/api/v1/namespaces/demo/pods/web/exec?command=ls");
  expect(head).toStartWith("HTTP/1.1 101 Switching Protocols\r\n");
  expect(head).toContain("Upgrade: SPDY/3.1\r\n");
  expect(head).toContain("X-Stream-Protocol-Version: v4.channel.k8s.io\r\n");
  const client = transport.connection.create(socket, { protocol: "spdy", isServer: false });
  client.start(3);
  const reply = await new Promise<string>((resolve, reject) => {
    client.request({ method: "POST", path: "/", headers: { streamtype: "error" } }, (error: Error | null, stream: NodeJS.ReadableStream) => {
      if (error) return reject(error);
      let text = "";
      stream.on("data", (chunk) => (text += chunk));
      stream.on("end", () => resolve(text));
    });
  });
  expect(reply).toBe("hello error");
  socket.destroy();
});

test("refusals of a SPDY upgrade are the usual Status, written on the connection, which then closes", async () => {
  const unauthorized = await upgrade("/api/v1/namespaces/demo/pods/web/exec?command=ls", "wrong");
  expect(unauthorized.head).toStartWith("HTTP/1.1 401 Unauthorized\r\n");
  expect(JSON.parse(await bodyAfter(unauthorized.socket))).toMatchObject({ kind: "Status", code: 401, reason: "Unauthorized" });
  const unknown = await upgrade("/api/v1/nothing");
  expect(unknown.head).toStartWith("HTTP/1.1 404 Not Found\r\n");
  expect(JSON.parse(await bodyAfter(unknown.socket))).toMatchObject({ code: 404, reason: "NotFound", message: "the server could not find the requested resource" });
});

/** Connections to `port` the kernel holds in CLOSE_WAIT: the peer has gone, our side never closed. */
function halfClosedOn(port: number): number {
  const localPort = `:${port.toString(16).toUpperCase().padStart(4, "0")} `;
  return readFileSync("/proc/net/tcp", "utf8").split("\n").filter((line) => line.split(/\s+/)[2]?.endsWith(localPort.trim()) && line.split(/\s+/)[4] === "08").length;
}

test("a refused upgrade's connection is closed on the server's side too once the client has gone (none left in CLOSE_WAIT)", async () => {
  const port = Number(new URL(server.url).port);
  const refused = await upgrade("/api/v1/nothing");
  expect(refused.head).toStartWith("HTTP/1.1 404 Not Found\r\n");
  await bodyAfter(refused.socket);
  for (let i = 0; i < 100 && halfClosedOn(port) > 0; i++) await Bun.sleep(20);
  expect(halfClosedOn(port)).toBe(0);
});

test("other requests on the same listener are served by Bun.serve as before", async () => {
  const response = await fetch(`${server.url}/plain`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as RequestInit);
  expect(await response.text()).toBe("plain");
});

test("a client that sends what is not SPDY after the upgrade has its connection closed, and the server serves on", async () => {
  const { head, socket } = await upgrade("/api/v1/namespaces/demo/pods/web/exec?command=ls");
  expect(head).toStartWith("HTTP/1.1 101 Switching Protocols\r\n");
  // A SYN_STREAM whose header block is not zlib: the parser fails on it.
  socket.write(Buffer.from([0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x20, ...Array.from({ length: 32 }, (_, i) => i)]));
  socket.resume();
  await new Promise((resolve) => socket.once("close", resolve));
  const response = await fetch(`${server.url}/plain`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as RequestInit);
  expect(await response.text()).toBe("plain");
});

test("a client's first frames sent in the same write as its upgrade request (before the 101) reach the session", async () => {
  const url = new URL(server.url);
  const socket = connect({ host: url.hostname, port: Number(url.port), ca: credentials.caPem, servername: "localhost" });
  await new Promise((resolve) => socket.once("secureConnect", resolve));
  // The SPDY client writes into `held` until the request goes out with its first frames in one write;
  // it reads what follows the 101's head.
  const held: Buffer[] = [];
  let send: ((chunk: Buffer, done: () => void) => void) | undefined;
  const wire = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      if (send) return send(chunk, done);
      held.push(chunk);
      done();
    },
  });
  let received = Buffer.alloc(0);
  let upgraded = false;
  socket.on("data", (chunk: Buffer) => {
    if (upgraded) return void wire.push(chunk);
    received = Buffer.concat([received, chunk]);
    const end = received.indexOf("\r\n\r\n");
    if (end === -1) return;
    upgraded = true;
    expect(received.subarray(0, end).toString()).toStartWith("HTTP/1.1 101 Switching Protocols\r\n");
    if (received.length > end + 4) wire.push(received.subarray(end + 4));
  });
  const client = transport.connection.create(wire, { protocol: "spdy", isServer: false });
  client.start(3);
  const opened = new Promise<NodeJS.ReadableStream>((resolve, reject) => {
    client.request({ method: "POST", path: "/", headers: { streamtype: "stdout" } }, (error: Error | null, stream: NodeJS.ReadableStream) => (error ? reject(error) : resolve(stream)));
  });
  // Resolves once the SYN_STREAM is written (into `held`).
  const stream = await opened;
  const reply = new Promise<string>((resolve) => {
    let text = "";
    stream.on("data", (chunk) => (text += chunk));
    stream.on("end", () => resolve(text));
  });
  const head = `POST /api/v1/namespaces/demo/pods/web/exec?command=ls HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${credentials.token}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`;
  const frames = Buffer.concat(held.splice(0));
  // SPDY/3 SYN_STREAM: control bit and version 3, type 1.
  expect(frames.includes(Buffer.from([0x80, 0x03, 0x00, 0x01]))).toBe(true);
  socket.write(Buffer.concat([Buffer.from(head), frames]));
  send = (chunk, done) => void socket.write(chunk, () => done());
  expect(await reply).toBe("hello stdout");
  socket.destroy();
});
