/**
 * `pods/NAME/exec` driven as the server would drive it: the route's handler with a request, then
 * the session it upgrades to with a fake socket, on the fake runtime and a real database.
 */
import { afterEach, expect, test } from "bun:test";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import { execRoutes } from "../../src/api/streaming/exec-api.ts";
import { MAX_UNSENT_BYTES, WEBSOCKET_START_DELAY_MS } from "../../src/api/streaming/exec-session.ts";
import type { ApiRequest, ApiSocket, WebSocketSession } from "../../src/api/http/http.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { waitFor } from "../e2e/helpers.ts";
import type { FakeClock } from "../fake-clock.ts";
import type { FakeExec } from "../fake-runtime.ts";
import { apiContext } from "../api-objects-fixtures.ts";

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

/** An agent with pod web-lab (containers web and side) running, and the API's context over its database. */
async function agent(options: { runtime?: boolean; maxExecSessions?: number; annotations?: Record<string, string>; restartPolicy?: "Never" } = {}) {
  const dir = tempDir();
  const h = storeHarness(dir.path);
  const web = { ...pod({ name: "web", restartPolicy: options.restartPolicy, containers: [container("web"), container("side")] }), annotations: options.annotations ?? {} };
  await h.kubelet.sync(desired(web));
  await h.advance(1);
  const api = apiContext(h.dbPath, h.clock, {
    ...(options.runtime !== false && { runtime: h.runtime }),
    limits: { maxExecSessions: options.maxExecSessions ?? DEFAULT_LIMITS.maxExecSessions },
  });
  cleanups.push(() => {
    api[Symbol.dispose]();
    h.agent.close();
    dir[Symbol.dispose]();
  });
  return { h, api };
}

interface Sent {
  frames: Uint8Array[];
  /** The base64 protocols' text messages. */
  text?: string[];
  closed?: { code?: number; reason?: string };
}

/** Calls the route as the server does; `upgraded` is the session it handed to `upgrade`, if any. */
async function call(api: ApiContext, query: string, options: { method?: "GET" | "POST"; pod?: string; headers?: Record<string, string> } = {}) {
  const method = options.method ?? "GET";
  const route = execRoutes.find((candidate) => candidate.method === method)!;
  const url = new URL(`https://127.0.0.1/api/v1/namespaces/demo/pods/${options.pod ?? "web-lab"}/exec?${query}`);
  const headers = new Headers(options.headers ?? { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Protocol": "v5.channel.k8s.io" });
  let upgraded: WebSocketSession | undefined;
  const request: ApiRequest = {
    method,
    url,
    headers,
    params: { namespace: "demo", name: options.pod ?? "web-lab" },
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new Uint8Array(),
    upgrade(session) {
      upgraded = session;
      return undefined;
    },
  };
  try {
    const response = await route.handle(request, api);
    return { response, upgraded };
  } catch (error) {
    if (error instanceof ApiError) return { error, upgraded };
    throw error;
  }
}

/** The binary protocols (v5, v4, v1) never send text. */
function binaryOnly(): never {
  throw new Error("a binary protocol sent a text message");
}

/** Opens the session on a socket that records what is sent; `send` answers with `sendResult`. */
function connect(session: WebSocketSession, clock: FakeClock, sendResult?: () => number): { socket: ApiSocket; sent: Sent; ended: Promise<void> } {
  const sent: Sent = { frames: [] };
  let markEnded: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (markEnded = resolve));
  const socket: ApiSocket = {
    send(data) {
      sent.frames.push(data.slice());
      return sendResult ? sendResult() : data.length;
    },
    sendText: session.protocol?.includes("base64.")
      ? (text) => {
          sent.text = [...(sent.text ?? []), text];
          return text.length;
        }
      : binaryOnly,
    close(code, reason) {
      sent.closed = { code, reason };
      session.close(socket, code ?? 1005, reason ?? "");
      markEnded();
    },
  };
  session.open(socket);
  clock.step(WEBSOCKET_START_DELAY_MS);
  return { socket, sent, ended };
}

const text = (frame: Uint8Array) => new TextDecoder().decode(frame.subarray(1));
const on = (sent: Sent, channel: number) => sent.frames.filter((frame) => frame[0] === channel).map(text).join("");
const statusOf = (sent: Sent) => JSON.parse(on(sent, 3));
const message = (channel: number, payload: string | number[]) =>
  new Uint8Array([channel, ...(typeof payload === "string" ? new TextEncoder().encode(payload) : payload)]);

test("a command's output comes on stdout, its exit code as NonZeroExitCode on channel 3, then a normal close", async () => {
  const { h, api } = await agent();
  h.runtime.exec = (_config, command) => ({ exitCode: 3, output: `ran ${command.join(" ")}\n` });
  const { response, upgraded } = await call(api, "command=sh&command=-c&command=echo+hi%3B+exit+3&container=web&stdout=true&stderr=true");
  expect(response?.status).toBe(101);
  expect(upgraded?.protocol).toBe("v5.channel.k8s.io");
  const { sent, ended } = connect(upgraded!, h.clock);
  await ended;
  expect(on(sent, 1)).toBe("ran sh -c echo hi; exit 3\n");
  expect(statusOf(sent)).toMatchObject({ status: "Failure", reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: "3" }] } });
  expect(sent.closed?.code).toBe(1000);
  expect(h.runtime.execs[0]?.container.container.name).toBe("web");
});

test("v1 (channel.k8s.io, what the upstream e2e tests dial): no exit status on success, the failure's message on channel 3 as text", async () => {
  const { h, api } = await agent();
  const v1 = { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Protocol": "channel.k8s.io" };
  h.runtime.exec = (_config, command) => ({ exitCode: command.includes("fail") ? 2 : 0, output: "remote execution test\n" });
  const ok = await call(api, "command=echo&command=remote+execution+test&container=web&stdout=1&stderr=1", { headers: v1 });
  expect(ok.upgraded?.protocol).toBe("channel.k8s.io");
  const good = connect(ok.upgraded!, h.clock);
  await good.ended;
  expect(good.sent.frames.map((frame) => frame[0])).toEqual([1]);
  expect(on(good.sent, 1)).toBe("remote execution test\n");
  const failed = await call(api, "command=fail&container=web&stdout=1", { headers: v1 });
  const bad = connect(failed.upgraded!, h.clock);
  await bad.ended;
  expect(on(bad.sent, 3)).toBe("command terminated with non-zero exit code: exit status 2");
});

test("base64.channel.k8s.io and v4.base64.channel.k8s.io: text messages, the channel as a digit, the payload in base64", async () => {
  const { h, api } = await agent();
  h.runtime.exec = () => ({ exitCode: 0, output: "hi\n" });
  for (const protocol of ["base64.channel.k8s.io", "v4.base64.channel.k8s.io"]) {
    const { upgraded } = await call(api, "command=echo&command=hi&container=web&stdout=1", { headers: { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Protocol": protocol } });
    expect(upgraded?.protocol).toBe(protocol);
    const { sent, ended } = connect(upgraded!, h.clock);
    await ended;
    expect(sent.frames).toEqual([]);
    expect(sent.text![0]).toBe(`1${Buffer.from("hi\n").toString("base64")}`);
    // v4 ends with the Status on channel 3; v1 says nothing of a success.
    expect(sent.text!.slice(1).map((message) => [message[0], JSON.parse(Buffer.from(message.slice(1), "base64").toString()).status])).toEqual(protocol.startsWith("v4") ? [["3", "Success"]] : []);
  }
});

test("with nothing from the client, the command starts WEBSOCKET_START_DELAY_MS after the socket opens (kubectl 1.30-1.33 drop what comes before their streams exist)", async () => {
  const { h, api } = await agent();
  h.runtime.exec = () => ({ exitCode: 0, output: "hi\n" });
  const { upgraded } = await call(api, "command=echo&command=hi&container=web&stdout=true");
  const sent: Uint8Array[] = [];
  const socket: ApiSocket = { send: (data) => sent.push(data.slice()), sendText: binaryOnly, close: () => undefined };
  upgraded!.open(socket);
  h.clock.step(WEBSOCKET_START_DELAY_MS - 1);
  await Promise.resolve();
  expect(h.runtime.execs).toHaveLength(0);
  expect(sent).toHaveLength(0);
  h.clock.step(1);
  await waitFor("the exit status", () => sent.some((frame) => frame[0] === 3), 5000);
  expect(on({ frames: sent }, 1)).toBe("hi\n");
});

test("the client's first message starts the command at once, the terminal at the size it sent", async () => {
  const { h, api } = await agent();
  h.runtime.interactive = (exec: FakeExec) => {
    exec.onInput = (self) => self.input.includes("exit") && self.exit(0);
  };
  const { upgraded } = await call(api, "command=sh&container=web&stdin=true&stdout=true&tty=true");
  const sent: Uint8Array[] = [];
  const socket: ApiSocket = { send: (data) => sent.push(data.slice()), sendText: binaryOnly, close: () => undefined };
  const timers = h.clock.pendingTimers();
  upgraded!.open(socket);
  upgraded!.message(socket, message(4, '{"Width":100,"Height":30}'));
  upgraded!.message(socket, message(0, "exit\r"));
  await waitFor("the exit status", () => sent.some((frame) => frame[0] === 3), 5000);
  expect(h.runtime.execs[0]?.request.size).toEqual({ width: 100, height: 30 });
  expect(h.runtime.execs[0]?.input).toBe("exit\r");
  // The start's timer is gone with the start.
  expect(h.clock.pendingTimers()).toBe(timers);
});

test("a client that leaves before the command started leaves no command behind", async () => {
  const { h, api } = await agent({ maxExecSessions: 1 });
  const { upgraded } = await call(api, "command=ls&container=web&stdout=true");
  const socket: ApiSocket = { send: () => 1, sendText: binaryOnly, close: () => undefined };
  upgraded!.open(socket);
  upgraded!.close(socket, 1001, "gone");
  h.clock.step(WEBSOCKET_START_DELAY_MS);
  await Promise.resolve();
  expect(h.runtime.execs).toHaveLength(0);
  expect((await call(api, "command=ls&container=web&stdout=true")).response?.status).toBe(101);
});

test("stdin reaches the command, input sent before it started included, and v5's close of stdin ends it: Success", async () => {
  const { h, api } = await agent();
  const { upgraded } = await call(api, "command=cat&container=side&stdin=true&stdout=true&stderr=true");
  const { socket, sent, ended } = connect(upgraded!, h.clock);
  upgraded!.message(socket, message(0, "early "));
  await Promise.resolve();
  upgraded!.message(socket, message(0, "data\n"));
  upgraded!.message(socket, message(255, [0]));
  await ended;
  expect(on(sent, 1)).toBe("early data\n");
  expect(statusOf(sent)).toEqual({ metadata: {}, status: "Success" });
  expect(h.runtime.execs[0]?.container.container.name).toBe("side");
});

test("with a TTY: stderr folds into stdout, and resizes reach the terminal", async () => {
  const { h, api } = await agent();
  h.runtime.interactive = (exec: FakeExec) => {
    exec.onInput = (self) => {
      if (self.input.includes("exit")) {
        void self.stderr("bye\r\n");
        self.exit(0);
      }
    };
  };
  const { upgraded } = await call(api, "command=sh&container=web&stdin=true&stdout=true&tty=true");
  const { socket, sent, ended } = connect(upgraded!, h.clock);
  upgraded!.message(socket, message(4, '{"Width":100,"Height":30}'));
  await Promise.resolve();
  upgraded!.message(socket, message(4, '{"Width":120,"Height":40}'));
  upgraded!.message(socket, message(0, "exit\r"));
  await ended;
  expect(h.runtime.execs[0]?.request.tty).toBe(true);
  expect(h.runtime.execs[0]?.sizes.at(-1)).toEqual({ width: 120, height: 40 });
  expect(on(sent, 1)).toBe("bye\r\n");
  expect(on(sent, 2)).toBe("");
});

test("the client going away kills the command and frees its slot", async () => {
  const { h, api } = await agent({ maxExecSessions: 1 });
  h.runtime.interactive = () => undefined; // runs until killed
  const first = await call(api, "command=sleep&command=60&container=web&stdout=true");
  const { socket } = connect(first.upgraded!, h.clock);
  await Promise.resolve();
  const refused = await call(api, "command=ls&container=web&stdout=true");
  expect(refused.response?.status).toBe(429);
  expect(await refused.response?.json()).toMatchObject({ reason: "TooManyRequests", message: "too many exec sessions open (limit 1); try again later" });
  expect(refused.response?.headers.get("Retry-After")).toBe("1");
  socket.close(1001, "client gone");
  expect(await h.runtime.execs[0]?.request.signal?.aborted).toBe(true);
  h.runtime.interactive = (exec) => exec.exit(0);
  expect((await call(api, "command=ls&container=web&stdout=true")).response?.status).toBe(101);
});

test("a client that stops reading holds the command's output back until it drains", async () => {
  const { h, api } = await agent();
  let secondWritten = false;
  h.runtime.interactive = (exec) => {
    void (async () => {
      await exec.stdout("first");
      await exec.stdout("second");
      secondWritten = true;
      exec.exit(0);
    })();
  };
  let backPressure = true;
  const { upgraded } = await call(api, "command=yes&container=web&stdout=true");
  const { socket, sent, ended } = connect(upgraded!, h.clock, () => (backPressure ? -1 : 1));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  expect(on(sent, 1)).toBe("first");
  expect(secondWritten).toBe(false);
  backPressure = false;
  upgraded!.drain?.(socket);
  await ended;
  expect(on(sent, 1)).toBe("firstsecond");
});

test("a terminal, which cannot pause, flooding a client that reads nothing ends the session", async () => {
  const { h, api } = await agent();
  h.runtime.interactive = (exec) => {
    for (let i = 0; i <= MAX_UNSENT_BYTES / (1024 * 1024); i++) void exec.stdout("x".repeat(1024 * 1024));
  };
  const { upgraded } = await call(api, "command=yes&container=web&stdout=true&tty=true");
  const { sent, ended } = connect(upgraded!, h.clock, () => -1);
  await ended;
  expect(sent.closed?.code).toBe(1011);
  expect(h.runtime.execs[0]?.request.signal?.aborted).toBe(true);
});

test("without a container the default-container annotation, else the first container, is used", async () => {
  const annotated = await agent({ annotations: { "kubectl.kubernetes.io/default-container": "side" } });
  connect((await call(annotated.api, "command=ls&stdout=true")).upgraded!, annotated.h.clock);
  expect(annotated.h.runtime.execs[0]?.container.container.name).toBe("side");
  const plain = await agent();
  connect((await call(plain.api, "command=ls&stdout=true")).upgraded!, plain.h.clock);
  expect(plain.h.runtime.execs[0]?.container.container.name).toBe("web");
});

test("refusals before the upgrade are the API server's Status errors", async () => {
  const { api } = await agent();
  const expectError = async (result: Awaited<ReturnType<typeof call>>, code: number, reason: string, messageText: string) => {
    expect(result.upgraded).toBeUndefined();
    expect(result.error?.toStatus()).toMatchObject({ code, reason, message: messageText });
  };
  await expectError(await call(api, "command=ls&stdout=true", { pod: "nope" }), 404, "NotFound", 'pods "nope" not found');
  await expectError(await call(api, "command=ls&container=db&stdout=true"), 400, "BadRequest", "container db is not valid for pod web-lab");
  await expectError(
    await call(api, "command=ls&container=web&stdout=true", { method: "POST", headers: { Upgrade: "SPDY/3.1", "X-Stream-Protocol-Version": "v3.channel.k8s.io, v2.channel.k8s.io" } }),
    400,
    "BadRequest",
    "requested protocol(s) are not supported: v3.channel.k8s.io, v2.channel.k8s.io; supports v4.channel.k8s.io",
  );
  await expectError(
    await call(api, "command=ls&container=web&stdout=true", { method: "POST", headers: {} }),
    400,
    "BadRequest",
    "exec needs a connection upgrade: to websocket (v5.channel.k8s.io, v4.channel.k8s.io, v4.base64.channel.k8s.io, channel.k8s.io, base64.channel.k8s.io) or SPDY/3.1 (v4.channel.k8s.io)",
  );
  await expectError(
    await call(api, "command=ls&container=web&stdout=true", { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": "v3.channel.k8s.io" } }),
    400,
    "BadRequest",
    "requested protocol(s) are not supported: v3.channel.k8s.io; supports v5.channel.k8s.io, v4.channel.k8s.io, v4.base64.channel.k8s.io, channel.k8s.io, base64.channel.k8s.io",
  );
  const once = await agent({ restartPolicy: "Never" });
  once.h.runtime.finish(once.h.runtime.running("side")!.id, 0);
  await once.h.advance(1);
  await expectError(await call(once.api, "command=ls&container=side&stdout=true"), 400, "BadRequest", 'container not found ("side"): it is not running');
  const serve = await agent({ runtime: false });
  await expectError(
    await call(serve.api, "command=ls&container=web&stdout=true"),
    503,
    "ServiceUnavailable",
    "exec needs the running agent: `minikubelet serve` only reads the database (start the pods with `minikubelet run`)",
  );
});
