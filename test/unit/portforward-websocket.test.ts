/**
 * Port-forward over the WebSocket channel protocol (what python's kubernetes.stream.portforward and
 * client-node's PortForward speak), end to end on loopback: a real WebSocket client against the
 * API server serving the route, on the fake runtime (whose pods' ports are the test's own loopback
 * listeners, test/pod-ports.ts). The port frames, data both ways per port, a refused port's error
 * on its error channel, the pod closing, the client leaving, and the base64 variant.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { DEFAULT_LIMITS } from "../../src/api/http/context.ts";
import { portForwardRoutes } from "../../src/api/portforward/portforward-api.ts";
import { startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { openSessionCount } from "../../src/api/streaming/streaming.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { apiContext } from "../api-objects-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { podPort as makePodPort } from "../pod-ports.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const credentialsDir = tempDir("minikubelet-pf-ws-");
const credentials = ensureCredentials(join(credentialsDir.path, "state.db"));

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function podPort(name: string, options: { hold?: boolean } = {}) {
  const port = await makePodPort(name, options);
  cleanups.push(() => port.close());
  return port;
}

/** A port that refuses connections: one that was listening a moment ago. */
async function deadPort(): Promise<number> {
  const port = await makePodPort("dead");
  port.close();
  return port.port;
}

/**
 * Pod web-lab running on the fake runtime, and the API server serving its port-forward route on
 * loopback: one for the file, as stopping a server that closed a WebSocket waits (server.ts).
 */
let agent: Awaited<ReturnType<typeof startAgent>>;
beforeAll(async () => void (agent = await startAgent()));
afterAll(async () => {
  await agent.stop();
  credentialsDir[Symbol.dispose]();
});

async function startAgent() {
  const dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const api = apiContext(h.dbPath, h.clock, { runtime: h.runtime, limits: DEFAULT_LIMITS });
  const server: ApiServer = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context: api, routes: portForwardRoutes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
  const sandboxId = [...h.runtime.sandboxes.values()][0]!.id;
  const stop = async () => {
    await server.stop();
    api[Symbol.dispose]();
    h.agent.close();
    dir[Symbol.dispose]();
  };
  return { h, api, server, sandboxId, stop };
}

interface Received {
  channel: number;
  payload: Buffer;
}

/** A channel-protocol client: every message it got, split by the codec of the protocol it was given. */
class ChannelClient {
  readonly received: Received[] = [];
  readonly closed: Promise<number>;
  private readonly waiters: (() => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.binaryType = "arraybuffer";
    socket.onmessage = (event) => {
      this.received.push(this.decode(event.data as ArrayBuffer | string));
      for (const waiter of this.waiters.splice(0)) waiter();
    };
    this.closed = new Promise((resolve) => socket.addEventListener("close", (event) => resolve(event.code)));
  }

  static async dial(server: ApiServer, query: string, protocols: string[] = ["v4.channel.k8s.io"]): Promise<ChannelClient> {
    const url = `${server.url.replace("https:", "wss:")}/api/v1/namespaces/demo/pods/web-lab/portforward?${query}`;
    const socket = new WebSocket(url, { protocols, headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as never);
    const client = new ChannelClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve());
      socket.addEventListener("error", () => reject(new Error(`the upgrade to ${url} failed`)));
    });
    return client;
  }

  get base64(): boolean {
    return this.socket.protocol === "v4.base64.channel.k8s.io";
  }

  /** Sends `text` on `channel` in the protocol's framing. */
  send(channel: number, text: string): void {
    if (this.base64) return this.socket.send(String.fromCharCode(48 + channel) + Buffer.from(text).toString("base64"));
    this.socket.send(Buffer.concat([Buffer.from([channel]), Buffer.from(text)]));
  }

  /** The first message each channel got: the port frame. */
  firstMessage(channel: number): number[] | undefined {
    const first = this.received.find((message) => message.channel === channel);
    return first && [...first.payload];
  }

  /** Everything `channel` carried after its port frame. */
  text(channel: number): string {
    return this.received
      .filter((message) => message.channel === channel)
      .slice(1)
      .map((message) => message.payload.toString())
      .join("");
  }

  /** Resolves once `condition()` holds, checked at each message (no polling). */
  async until(what: string, condition: () => boolean): Promise<void> {
    const deadline = AbortSignal.timeout(4000);
    while (!condition()) {
      await new Promise<void>((resolve, reject) => {
        this.waiters.push(resolve);
        deadline.addEventListener("abort", () => reject(new Error(`timed out waiting for ${what}; received ${JSON.stringify(this.received.map((m) => [m.channel, m.payload.toString()]))}`)));
      });
    }
  }

  close(): void {
    this.socket.close(1000);
  }

  private decode(data: ArrayBuffer | string): Received {
    if (typeof data === "string") return { channel: data.charCodeAt(0) - 48, payload: Buffer.from(data.slice(1), "base64") };
    const bytes = Buffer.from(data);
    return { channel: bytes[0]!, payload: bytes.subarray(1) };
  }
}

const portFrame = (port: number) => [port & 0xff, port >> 8];

/** Resolves once the API server has no port-forward session open (its close handler runs after the client's close). */
async function noSessionLeft(): Promise<void> {
  for (let i = 0; openSessionCount(agent.api, "port-forward") > 0; i++) {
    if (i > 400) throw new Error(`${openSessionCount(agent.api, "port-forward")} port-forward sessions still open`);
    await Bun.sleep(5);
  }
}

test("two ports: each channel opens with its port (2 bytes, little-endian), each port's bytes reach its own pod port and back, and the WebSocket closes once both pods closed", async () => {
  const { server } = agent;
  const [a, b] = [await podPort("a"), await podPort("b")];
  const client = await ChannelClient.dial(server, `ports=${a.port}&ports=${b.port}`);
  expect(client.socket.protocol).toBe("v4.channel.k8s.io");
  await client.until("four port frames", () => client.received.length >= 4);
  expect([0, 1, 2, 3].map((channel) => client.firstMessage(channel))).toEqual([portFrame(a.port), portFrame(a.port), portFrame(b.port), portFrame(b.port)]);
  client.send(0, "hello");
  client.send(2, "there");
  expect(await client.closed).toBe(1000);
  expect({ a: client.text(0), aError: client.text(1), b: client.text(2), bError: client.text(3) }).toEqual({ a: "a:hello", aError: "", b: "b:there", bError: "" });
  await noSessionLeft();
});

test("a comma list in one ports value is as many ports, and a client offering v5 first (client-node) gets v4", async () => {
  const { server } = agent;
  const [a, b] = [await podPort("a"), await podPort("b")];
  const client = await ChannelClient.dial(server, `ports=${a.port},${b.port}`, ["v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"]);
  expect(client.socket.protocol).toBe("v4.channel.k8s.io");
  await client.until("both port frames on channels 0 and 2", () => client.firstMessage(2) !== undefined);
  expect(client.firstMessage(2)).toEqual(portFrame(b.port));
  client.send(2, "x");
  client.send(0, "y");
  expect(await client.closed).toBe(1000);
  expect([client.text(0), client.text(2)]).toEqual(["a:y", "b:x"]);
});

test("a refused port: the kubelet's error on its error channel, while the other port forwards on; the WebSocket stays open for it", async () => {
  const { api, server, sandboxId } = agent;
  const live = await podPort("web", { hold: true });
  const dead = await deadPort();
  const client = await ChannelClient.dial(server, `ports=${live.port}&ports=${dead}`);
  await client.until("the dead port's error", () => client.text(3) !== "");
  expect(client.text(3)).toBe(`error forwarding port ${dead} to pod ${sandboxId}, uid : dial tcp4 127.0.0.1:${dead}: connect: connection refused`);
  expect(client.text(2)).toBe("");
  client.send(0, "still here");
  await client.until("the live port's answer", () => client.text(0) === "web:still here");
  expect(client.socket.readyState).toBe(WebSocket.OPEN);
  expect(openSessionCount(api, "port-forward")).toBe(1);
  client.close();
  await live.until(0);
  await noSessionLeft();
});

test("the client leaving closes every connection to the pod and frees the session's slot", async () => {
  const { h, server } = agent;
  const pod = await podPort("web", { hold: true });
  const client = await ChannelClient.dial(server, `ports=${pod.port}&ports=${pod.port}`);
  client.send(0, "one");
  client.send(2, "two");
  await client.until("both answers", () => client.text(0) === "web:one" && client.text(2) === "web:two");
  expect(pod.open()).toBe(2);
  const sandbox = [...h.runtime.sandboxes.values()][0]!;
  expect(h.runtime.calls.filter((call) => call.endsWith(` ${pod.port}`))).toEqual([`port-forward ${sandbox.id} ${pod.port}`, `port-forward ${sandbox.id} ${pod.port}`]);
  client.close();
  await pod.until(0);
  await noSessionLeft();
});

test("what the kubelet skips is skipped: a channel no port has, an error channel, an empty message; the agent forwards on", async () => {
  const { server } = agent;
  const pod = await podPort("web", { hold: true });
  const client = await ChannelClient.dial(server, `ports=${pod.port}`);
  client.send(9, "nobody");
  client.send(1, "to the error channel");
  client.socket.send(new Uint8Array());
  client.send(0, "ping");
  await client.until("the answer", () => client.text(0) === "web:ping");
  expect(client.text(1)).toBe("");
  client.close();
  await pod.until(0);
});

test("v4.base64.channel.k8s.io: text messages, the channel as '0' + n and the payload in base64, both ways", async () => {
  const { server } = agent;
  const pod = await podPort("web");
  const client = await ChannelClient.dial(server, `ports=${pod.port}`, ["v4.base64.channel.k8s.io"]);
  expect(client.socket.protocol).toBe("v4.base64.channel.k8s.io");
  await client.until("both port frames", () => client.received.length >= 2);
  expect([client.firstMessage(0), client.firstMessage(1)]).toEqual([portFrame(pod.port), portFrame(pod.port)]);
  client.send(0, "héllo");
  expect(await client.closed).toBe(1000);
  expect(client.text(0)).toBe("web:héllo");
});

test("a client offering no subprotocol is served binary, and none is answered", async () => {
  const { server } = agent;
  const pod = await podPort("web");
  const client = await ChannelClient.dial(server, `ports=${pod.port}`, []);
  expect(client.socket.protocol).toBe("");
  client.send(0, "plain");
  expect(await client.closed).toBe(1000);
  expect([client.firstMessage(0), client.text(0)]).toEqual([portFrame(pod.port), "web:plain"]);
});
