/**
 * HTTP/2 on the kubelet port (the API server's requests to a node come so, as to the kubelet's Go
 * server): a client that chooses `h2` is served stream by stream, every stream with the
 * connection's certificate; one that does not gets HTTP/1.1 as before; a connection with no stream
 * open is closed after the idle time, and never while a stream is open.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { join } from "node:path";
import type { CertificateUser } from "../../src/api/http/certificate-user.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import { startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";
import { issueClientCertificate, recordingGate } from "../certificate-fixtures.ts";

const dir = tempDir("minikubelet-http2-");
const credentials = ensureCredentials(join(dir.path, "state.db"));
const file = (name: string) => join(dir.path, name);
const read = (name: string) => readFileSync(file(name), "utf8");
const clock = new FakeClock();
/** Seconds the server keeps a connection with no stream open (server.ts's idle timeout). */
const IDLE_SECONDS = 60;
/** 64 KiB chunks of a body far past HTTP/2's 64 KiB stream window: the server waits for the client many times. */
const BIG_CHUNKS = 128;

const seen: (CertificateUser | undefined)[] = [];
let server: ApiServer;
let releaseSlow: () => void = () => {};

beforeAll(() => {
  issueClientCertificate(dir.path, "ca", "alice", "/O=team-a/CN=alice");
  const context: ApiContext = { store: new StoreReader(new Database(":memory:")), dbPath: "", clock, nodeName: "lab", commits: new CommitBroadcast(), limits: DEFAULT_LIMITS };
  server = startApiServer({
    listen: { hostname: "127.0.0.1", port: 0 },
    context,
    routes: [
      { method: "GET", path: "/who", handle: () => new Response("served", { headers: { "content-type": "text/plain" } }) },
      { method: "POST", path: "/echo", handle: async (request) => new Response(await request.body()) },
      {
        method: "GET",
        path: "/big",
        handle: () => {
          let sent = 0;
          return new Response(
            new ReadableStream({
              pull(controller) {
                if (sent === BIG_CHUNKS) return controller.close();
                controller.enqueue(new Uint8Array(64 * 1024).fill(sent++ % 251));
              },
            }),
          );
        },
      },
      {
        method: "GET",
        path: "/slow",
        handle: () =>
          new Response(
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode("first\n"));
                releaseSlow = () => (controller.enqueue(new TextEncoder().encode("last\n")), controller.close());
              },
            }),
          ),
      },
    ],
    tls: { cert: credentials.certPem, key: credentials.keyPem },
    token: credentials.token,
    clientCa: read("ca.crt"),
    gate: recordingGate(seen),
    http2: true,
    log: () => {},
  });
});

afterAll(async () => {
  await server.stop();
  dir[Symbol.dispose]();
});

/**
 * A session once the server's HTTP/2 side answered (its SETTINGS): Bun's client loses the streams
 * asked for before it connected, and the server has then taken the connection from its handshake.
 */
async function connect(): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(server.url, { ca: credentials.caPem, cert: read("alice.crt"), key: read("alice.key") });
  await new Promise((connected, failed) => (session.once("remoteSettings", connected), session.once("error", failed)));
  return session;
}

function request(session: http2.ClientHttp2Session, path: string, options: { method?: string; body?: string; onData?: (text: string) => void } = {}): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> {
  return new Promise((done, failed) => {
    const stream = session.request({ ":method": options.method ?? "GET", ":path": path });
    let status = 0;
    let headers: http2.IncomingHttpHeaders = {};
    let body = "";
    stream.on("response", (answer) => ((status = Number(answer[":status"])), (headers = answer)));
    stream.on("data", (chunk) => ((body += String(chunk)), options.onData?.(body)));
    stream.on("end", () => done({ status, headers, body }));
    stream.on("error", failed);
    stream.end(options.body);
  });
}

test("an h2 client's streams share one connection, each served with its certificate; no HTTP/1.1 connection header comes back", async () => {
  seen.length = 0;
  const session = await connect();
  try {
    const answers = await Promise.all([request(session, "/who"), request(session, "/who"), request(session, "/echo", { method: "POST", body: "a body" })]);
    expect(answers.map(({ status, body }) => `${status} ${body}`)).toEqual(["200 served", "200 served", "200 a body"]);
    expect(answers[0]!.headers["content-type"]).toBe("text/plain");
    expect(answers[0]!.headers.connection).toBeUndefined();
    expect(seen.map((user) => user?.name)).toEqual(["alice", "alice", "alice"]);
  } finally {
    session.close();
  }
});

test("a body far larger than the stream's window comes whole and in order, the writer waiting on the client's flow control", async () => {
  const session = await connect();
  try {
    const received = await new Promise<Buffer>((done, failed) => {
      const stream = session.request({ ":method": "GET", ":path": "/big" });
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => done(Buffer.concat(chunks)));
      stream.on("error", failed);
      stream.end();
    });
    expect(received.length).toBe(BIG_CHUNKS * 64 * 1024);
    const firstOfEach = Array.from({ length: BIG_CHUNKS }, (_, index) => received[index * 64 * 1024]);
    expect(firstOfEach).toEqual(Array.from({ length: BIG_CHUNKS }, (_, index) => index % 251));
  } finally {
    session.close();
  }
});

test("curl is served over HTTP/2 when it asks for it, and over HTTP/1.1 when it offers only that", async () => {
  writeFileSync(file("server-ca.pem"), credentials.caPem);
  const curl = async (version: string) => {
    // Not spawnSync: the server answering it runs in this process.
    const child = Bun.spawn(["curl", "-s", version, "-w", " %{http_version}", "--cacert", file("server-ca.pem"), "--cert", file("alice.crt"), "--key", file("alice.key"), `${server.url}/who`], { stdout: "pipe" });
    const [out] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    return out;
  };
  expect(await curl("--http2")).toBe("served 2");
  expect(await curl("--http1.1")).toBe("served 1.1");
});

/**
 * Whether `session` closed once the server had its chance to act on a clock step: `now()` lets the
 * server's timers' effects arrive (a close that is not coming shows as false), `soon()` waits up to
 * a second for one that is.
 */
function closing(session: http2.ClientHttp2Session): { now(): Promise<boolean>; soon(): Promise<boolean> } {
  let closed = false;
  session.on("close", () => (closed = true));
  session.on("error", () => {});
  return {
    now: async () => (await Bun.sleep(50), closed),
    async soon() {
      for (let i = 0; i < 100 && !closed; i++) await Bun.sleep(10);
      return closed;
    },
  };
}

test("a connection with no stream open is closed after the idle time, and not while a stream is still open", async () => {
  const session = await connect();
  const closed = closing(session);
  try {
    let slow: Promise<{ body: string }> | undefined;
    await new Promise<void>((started) => (slow = request(session, "/slow", { onData: (text) => text === "first\n" && started() })));
    clock.stepSeconds(IDLE_SECONDS * 2);
    expect(await closed.now()).toBe(false);
    releaseSlow();
    expect((await slow!).body).toBe("first\nlast\n");
    clock.stepSeconds(IDLE_SECONDS - 1);
    expect(await closed.now()).toBe(false);
    clock.stepSeconds(1);
    expect(await closed.soon()).toBe(true);
  } finally {
    session.destroy();
  }
});

test("a connection that chose h2 but asks nothing is cut at the first request's deadline, as an HTTP/1.1 one is", async () => {
  const session = await connect();
  const closed = closing(session);
  try {
    clock.step(DEFAULT_LIMITS.readHeaderTimeoutMs - 1);
    expect(await closed.now()).toBe(false);
    clock.step(1);
    expect(await closed.soon()).toBe(true);
  } finally {
    session.destroy();
  }
});
