/**
 * `pods/NAME/exec` over SPDY (kubectl 1.27 to 1.29) driven as the server would drive it: the
 * route's handler with a SPDY upgrade request, then its session on a fake connection whose streams
 * the test opens as spdystream does, on the fake runtime and a real database.
 */
import { afterEach, expect, test } from "bun:test";
import { Duplex } from "node:stream";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import { execRoutes } from "../../src/api/streaming/exec-api.ts";
import { STREAM_CREATION_TIMEOUT_MS } from "../../src/api/streaming/exec-spdy-session.ts";
import type { ApiRequest, SpdySession } from "../../src/api/http/http.ts";
import type { SpdyConnection, SpdyStream } from "../../src/api/http/spdy.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { apiContext } from "../api-objects-fixtures.ts";

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

async function agent(maxExecSessions = DEFAULT_LIMITS.maxExecSessions) {
  const dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const api = apiContext(h.dbPath, h.clock, { runtime: h.runtime, limits: { maxExecSessions } });
  cleanups.push(() => {
    api[Symbol.dispose]();
    h.agent.close();
    dir[Symbol.dispose]();
  });
  return { h, api };
}

/** kubectl 1.27's request: a POST asking SPDY/3.1, offering v4 down to v1. */
async function call(api: ApiContext, query: string) {
  const url = new URL(`https://127.0.0.1/api/v1/namespaces/demo/pods/web-lab/exec?${query}`);
  let upgraded: SpdySession | undefined;
  const request: ApiRequest = {
    method: "POST",
    url,
    headers: new Headers({ Upgrade: "SPDY/3.1", Connection: "Upgrade", "X-Stream-Protocol-Version": "v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io" }),
    params: { namespace: "demo", name: "web-lab" },
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new Uint8Array(),
    upgrade: () => undefined,
    upgradeSpdy(session) {
      upgraded = session;
      return undefined;
    },
  };
  const response = await execRoutes.find((route) => route.method === "POST")!.handle(request, api);
  return { response, upgraded };
}

/** A stream as the session sees it: what the client sends is pushed, what the server writes kept. */
class FakeStream extends Duplex {
  written = "";
  ended = false;
  replied: number | undefined;
  constructor(readonly headers: Record<string, string>) {
    super();
  }
  /** Whether `respond` writes its reply at once; if not, `writeReply` does it later. */
  holdReply = false;
  private pendingReply: (() => void) | undefined;
  respond(status: number, _headers: Record<string, string>, written?: (error: Error | null) => void): void {
    this.pendingReply = () => {
      this.replied = status;
      written?.(null);
    };
    if (!this.holdReply) this.writeReply();
  }
  writeReply(): void {
    const write = this.pendingReply;
    this.pendingReply = undefined;
    write?.();
  }
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.written += chunk.toString();
    done();
  }
  override _final(done: () => void): void {
    this.ended = true;
    done();
  }
}

function connection(session: SpdySession) {
  let onStream: (stream: SpdyStream) => void = () => undefined;
  const onClose: (() => void)[] = [];
  let markEnded: (how: "finished" | "ended") => void = () => undefined;
  /** How the session let the connection go: `finished` (its streams ended) or `ended` (given up, GOAWAY). */
  const ended = new Promise<"finished" | "ended">((resolve) => (markEnded = resolve));
  const fake: SpdyConnection = {
    onStream: (handler) => (onStream = handler),
    onClose: (handler) => void onClose.push(handler),
    finish: () => markEnded("finished"),
    end: () => markEnded("ended"),
  };
  session.open(fake);
  return {
    ended,
    open(type: string, options: { holdReply?: boolean } = {}): FakeStream {
      const stream = new FakeStream({ streamtype: type });
      stream.holdReply = options.holdReply ?? false;
      onStream(stream as unknown as SpdyStream);
      return stream;
    },
    clientGone: () => onClose.forEach((handler) => handler()),
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

test("the command starts once every stream asked for is open; output on stdout, the exit code on the error stream, then all end", async () => {
  const { h, api } = await agent();
  h.runtime.exec = (_config, command) => ({ exitCode: 3, output: `ran ${command.join(" ")}\n` });
  const { response, upgraded } = await call(api, "command=sh&command=-c&command=echo+hi%3B+exit+3&container=web&stdout=true&stderr=true");
  expect(response.status).toBe(101);
  expect(upgraded?.protocol).toBe("v4.channel.k8s.io");
  const client = connection(upgraded!);
  const error = client.open("error");
  const stdout = client.open("stdout");
  await settle();
  expect(h.runtime.execs).toHaveLength(0);
  const stderr = client.open("stderr");
  expect(await client.ended).toBe("finished");
  expect([error.replied, stdout.replied, stderr.replied]).toEqual([200, 200, 200]);
  expect(stdout.written).toBe("ran sh -c echo hi; exit 3\n");
  expect(JSON.parse(error.written)).toMatchObject({ status: "Failure", reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: "3" }] } });
  expect([error.ended, stdout.ended, stderr.ended]).toEqual([true, true, true]);
});

test("stdin's stream reaches the command and its end ends it; a terminal gets the resize stream's sizes", async () => {
  const { h, api } = await agent();
  const piped = await call(api, "command=cat&container=web&stdin=true&stdout=true&stderr=true");
  const client = connection(piped.upgraded!);
  const error = client.open("error");
  const stdin = client.open("stdin");
  const stdout = client.open("stdout");
  client.open("stderr");
  stdin.push("data\n");
  stdin.push(null);
  await client.ended;
  expect(stdout.written).toBe("data\n");
  expect(JSON.parse(error.written)).toEqual({ metadata: {}, status: "Success" });

  h.runtime.interactive = (exec) => void (exec.onInput = (self) => self.input.includes("exit") && self.exit(0));
  const tty = await call(api, "command=sh&container=web&stdin=true&stdout=true&stderr=true&tty=true");
  const terminal = connection(tty.upgraded!);
  terminal.open("error");
  const input = terminal.open("stdin");
  terminal.open("stdout");
  const resize = terminal.open("resize");
  resize.push('{"Width":100,"Height":30}\n{"Width":12');
  await settle();
  resize.push('0,"Height":40}\n');
  await settle();
  input.push("exit\r");
  await terminal.ended;
  expect(h.runtime.execs[1]?.sizes.at(-1)).toEqual({ width: 120, height: 40 });
});

test("the client going away kills the command and frees its slot", async () => {
  const { h, api } = await agent(1);
  h.runtime.interactive = () => undefined; // runs until killed
  const client = connection((await call(api, "command=sleep&command=60&container=web&stdout=true")).upgraded!);
  client.open("error");
  client.open("stdout");
  await settle();
  expect((await call(api, "command=ls&container=web&stdout=true")).response.status).toBe(429);
  client.clientGone();
  expect(h.runtime.execs[0]?.request.signal?.aborted).toBe(true);
  expect((await call(api, "command=ls&container=web&stdout=true")).response.status).toBe(101);
});

test("a stream the client resets, or one of a type it should not open, ends only itself", async () => {
  const { h, api } = await agent();
  h.runtime.interactive = () => undefined; // runs until killed
  const client = connection((await call(api, "command=sleep&command=60&container=web&stdout=true")).upgraded!);
  const stray = client.open("portforward");
  const error = client.open("error");
  client.open("stdout");
  expect(() => stray.emit("error", new Error("Got RST: PROTOCOL_ERROR"))).not.toThrow();
  expect(() => error.emit("error", new Error("Got RST: PROTOCOL_ERROR"))).not.toThrow();
  await settle();
  expect(h.runtime.execs).toHaveLength(1);
  client.clientGone();
});

test("the command waits until every stream's reply is written, so no output, Status or end can go out before a reply", async () => {
  const { h, api } = await agent();
  const client = connection((await call(api, "command=ls&container=web&stdout=true&stderr=true")).upgraded!);
  client.open("error");
  client.open("stdout");
  const stderr = client.open("stderr", { holdReply: true });
  await settle();
  expect(h.runtime.execs).toHaveLength(0);
  stderr.writeReply();
  expect(await client.ended).toBe("finished");
  expect(h.runtime.execs).toHaveLength(1);
});

test("a client that has not opened its streams after STREAM_CREATION_TIMEOUT_MS gets a Status saying which, its streams end, and the slot is free", async () => {
  const { h, api } = await agent(1);
  const client = connection((await call(api, "command=ls&container=web&stdout=true&stderr=true")).upgraded!);
  const error = client.open("error");
  client.open("stdout");
  h.clock.step(STREAM_CREATION_TIMEOUT_MS - 1);
  await settle();
  expect((await call(api, "command=ls&container=web&stdout=true")).response.status).toBe(429);
  h.clock.step(1);
  expect(await client.ended).toBe("finished");
  expect(JSON.parse(error.written)).toMatchObject({ status: "Failure", message: "Internal error occurred: timed out waiting for the client to create streams (stderr)" });
  expect(error.ended).toBe(true);
  expect(h.runtime.execs).toHaveLength(0);
  expect((await call(api, "command=ls&container=web&stdout=true")).response.status).toBe(101);
});
