/**
 * The channel-protocol port-forward session's back-pressure, on a fake socket whose sends report
 * what the test says and real loopback pods: a client that reads nothing holds the pod's bytes back
 * at the pod (every write waits for the socket's drain), and a pod that reads nothing cannot make
 * the agent hold more of the client's bytes than its bound (the WebSocket cannot be paused): the
 * connection holding them is failed on its error channel instead.
 */
import { afterEach, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import type { ApiSocket } from "../../src/api/http/http.ts";
import { PortForwardWebSocketSession } from "../../src/api/portforward/portforward-ws-session.ts";
import { channelFrame } from "../../src/api/streaming/ws-channels.ts";
import { realClock } from "../../src/clock.ts";

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** A pod port whose connections the test drives (what they write). */
async function podPort(onConnection: (socket: Socket) => void): Promise<{ port: number; connections: Socket[]; server: Server }> {
  const connections: Socket[] = [];
  const server = createServer((socket) => {
    connections.push(socket);
    socket.on("error", () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    for (const socket of connections) socket.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, connections, server };
}

/** A session on a socket whose `send` answers `sendResult()`; what it sent, by channel. */
function session(ports: number[], sendResult: () => number, maxUnreadBytes?: number) {
  const sent: { channel: number; payload: Buffer }[] = [];
  let closedWith: number | undefined;
  let ended = 0;
  const socket: ApiSocket = {
    send(data) {
      sent.push({ channel: data[0]!, payload: Buffer.from(data.subarray(1)) });
      return sendResult();
    },
    sendText: () => {
      throw new Error("v4.channel.k8s.io is binary");
    },
    close: (code) => void (closedWith = code),
  };
  const forward = new PortForwardWebSocketSession({
    address: (port) => ({ host: "127.0.0.1", port }),
    sandboxId: "sandbox-1",
    clock: realClock,
    ports,
    protocol: "v4.channel.k8s.io",
    onEnd: () => (ended += 1),
    ...(maxUnreadBytes !== undefined && { maxUnreadBytes }),
  });
  forward.open(socket);
  closers.push(() => forward.close());
  const bytesOn = (channel: number) =>
    Buffer.concat(
      sent
        .filter((message) => message.channel === channel)
        .slice(1)
        .map((message) => message.payload),
    );
  return { forward, socket, sent, bytesOn, closedWith: () => closedWith, ended: () => ended };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

async function until(what: string, condition: () => boolean, turns = 20_000): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > turns) throw new Error(`timed out waiting for ${what}`);
    await turn();
  }
}

/** 32 MiB: more than loopback's kernel buffers take, so the pod itself is held back. */
const DOWNLOAD = 32 * 1024 * 1024;

test("a client that reads nothing holds the pod's bytes back at the pod; each drain lets one more message go, in order", async () => {
  const body = Buffer.alloc(DOWNLOAD, 0);
  for (let i = 0; i < body.length; i += 4) body.writeUInt32BE(i / 4, i);
  const pod = await podPort((socket) => socket.end(body));
  const { forward, sent, bytesOn, closedWith, ended } = session([pod.port], () => -1);
  await until("the pod's connection", () => pod.connections.length === 1);
  await Bun.sleep(200);
  // Only the port frames went (each answered with back-pressure): the pod still holds most of its bytes.
  expect(sent.map((message) => message.channel)).toEqual([0, 1]);
  expect(pod.connections[0]!.writableLength).toBeGreaterThan(0);
  while (closedWith() === undefined) {
    forward.drain();
    await turn();
  }
  expect(bytesOn(0).equals(body)).toBe(true);
  expect(bytesOn(1).length).toBe(0);
  expect([closedWith(), ended()]).toEqual([1000, 1]);
});

/**
 * A pod port that accepts and never reads: a Bun socket paused at once stops reading from the
 * kernel (a node:net socket's pause() in Bun still reads, into its own buffer).
 */
function stalledPodPort() {
  const connections: unknown[] = [];
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        connections.push(socket);
        socket.pause();
      },
      data() {},
    },
  });
  closers.push(() => listener.stop(true));
  return { port: listener.port, connections };
}

test("a pod that reads nothing: past the bound of unread client bytes, its connection is failed on its error channel, the others forward on", async () => {
  const stalled = stalledPodPort();
  const echo = await podPort((socket) => socket.on("data", (chunk) => socket.write(chunk)));
  const limit = 1024 * 1024;
  const { forward, socket, bytesOn, closedWith } = session([stalled.port, echo.port], () => 1, limit);
  await until("both pod connections", () => stalled.connections.length === 1 && echo.connections.length === 1);
  const chunk = Buffer.alloc(64 * 1024, 7);
  let offered = 0;
  while (bytesOn(1).length === 0) {
    if (offered > 256 * chunk.length) throw new Error(`no error after ${offered} bytes`);
    forward.message(socket, channelFrame(0, chunk));
    offered += chunk.length;
    await turn();
  }
  expect(bytesOn(1).toString()).toMatch(new RegExp(`^error forwarding port ${stalled.port} to pod sandbox-1, uid : the pod has not read (\\d+) bytes the client sent \\(limit ${limit} unread bytes per WebSocket\\)$`));
  const unread = Number(/not read (\d+) bytes/.exec(bytesOn(1).toString())![1]);
  expect(unread).toBeGreaterThan(limit);
  // The agent's side is closed (the pod, reading nothing, does not see it: that is the pod's).
  await until("the stalled pod's connection over", () => forward.connections === 1);
  // Its later bytes are dropped; the other port still answers, and the WebSocket is open for it.
  forward.message(socket, channelFrame(0, chunk));
  forward.message(socket, channelFrame(2, "still here"));
  await until("the echo", () => bytesOn(2).toString() === "still here");
  expect(closedWith()).toBeUndefined();
});
