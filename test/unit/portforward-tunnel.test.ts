/**
 * SPDY tunnelled in a WebSocket (kubectl 1.31+): the port-forward session served on a WebSocket
 * session whose socket is a fake that hands each binary message to a real SPDY client, and the
 * client's bytes back as messages, as Bun.serve would. Also the tunnel's own byte stream: one
 * message per write, and writes held while the socket reports back-pressure.
 */
import { afterEach, expect, test } from "bun:test";
import { Duplex } from "node:stream";
import type { ApiSocket } from "../../src/api/http/http.ts";
import { PortForwardSession } from "../../src/api/portforward/portforward-session.ts";
import { SpdyOverWebSocket, WebSocketTunnel } from "../../src/api/streaming/spdy-tunnel.ts";
import { realClock } from "../../src/clock.ts";
import { podPort as makePodPort } from "../pod-ports.ts";
import { PortForwardClient } from "../portforward-client.ts";

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

async function podPort(name: string, options: { hold?: boolean } = {}) {
  const pod = await makePodPort(name, options);
  closers.push(() => pod.close());
  return pod;
}

/**
 * A port-forward session on a WebSocket session, and a SPDY client whose bytes are that socket's
 * messages. `closed` is the close the server asked for; `clientLeaves` closes it from the client.
 */
function tunnelled() {
  let ended = 0;
  const session = new PortForwardSession({ address: (port) => ({ host: "127.0.0.1", port }), sandboxId: "sandbox-1", clock: realClock, onEnd: () => (ended += 1) });
  const webSocket = new SpdyOverWebSocket(session, realClock);
  const sent: Uint8Array[] = [];
  let closed: number | undefined;
  const socket: ApiSocket = {
    send(data) {
      sent.push(data);
      clientSide.push(Buffer.from(data));
      return data.length;
    },
    sendText: () => {
      throw new Error("the tunnel sent a text message: SPDY's bytes go in binary ones");
    },
    close: (code) => void (closed = code),
  };
  const clientSide = new Duplex({
    read() {},
    // Asynchronous, as a message arrives on a later turn of the event loop.
    write(chunk: Buffer, _encoding, done) {
      queueMicrotask(() => webSocket.message(socket, new Uint8Array(chunk)));
      done();
    },
  });
  webSocket.open(socket);
  const client = new PortForwardClient(clientSide);
  closers.push(() => clientSide.destroy());
  return {
    webSocket,
    session,
    client,
    sent,
    closed: () => closed,
    ended: () => ended,
    clientLeaves: () => webSocket.close(),
  };
}

test("the WebSocket's subprotocol is the SPDY one, prefixed, as client-go offers it", () => {
  expect(tunnelled().webSocket.protocol).toBe("SPDY/3.1+portforward.k8s.io");
});

test("a pair forwards over the tunnel as over a SPDY upgrade: the answer, then an empty error stream; a port nothing listens on, the kubelet's message", async () => {
  const pod = await podPort("web");
  const { client, sent } = tunnelled();
  expect(await client.exchange(pod.port, "0", "GET /")).toEqual({ data: "web:GET /", error: "" });
  expect(sent.length).toBeGreaterThan(0);
  const dead = pod.port;
  pod.close();
  const answer = await client.exchange(dead, "1", "GET /");
  expect(answer.error).toBe(`error forwarding port ${dead} to pod sandbox-1, uid : dial tcp4 127.0.0.1:${dead}: connect: connection refused`);
});

test("the client closing the WebSocket ends the session and cuts its forwarded connections", async () => {
  const pod = await podPort("web", { hold: true });
  const { client, session, ended, clientLeaves } = tunnelled();
  const pairs = await Promise.all([0, 1].map((i) => client.forward(pod.port, String(i))));
  for (const pair of pairs) pair.data.write("hi");
  await pod.until(2);
  clientLeaves();
  await pod.until(0);
  expect(session.connections).toBe(0);
  expect(ended()).toBe(1);
});

/** A tunnel on a socket whose `send` answers `answers[n]` for its nth call (default: all sent). */
function tunnelOn(answers: number[]) {
  const sent: string[] = [];
  let closedWith: number | undefined;
  const tunnel = new WebSocketTunnel({
    send(data) {
      sent.push(Buffer.from(data).toString());
      return answers[sent.length - 1] ?? data.length;
    },
    close: (code) => void (closedWith = code),
  });
  return { tunnel, sent, closedWith: () => closedWith };
}

function write(stream: Duplex, text: string): Promise<void> {
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

test("each write is one message; after a send reports back-pressure, the next waits for drain", async () => {
  const { tunnel, sent } = tunnelOn([1, -1]);
  await write(tunnel, "a");
  let secondDone = false;
  const second = write(tunnel, "b").then(() => (secondDone = true));
  const third = write(tunnel, "c");
  // Let the stream pass on whatever it would: nothing more may reach the socket before drain.
  await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
  expect(sent).toEqual(["a", "b"]);
  expect(secondDone).toBe(false);
  tunnel.drained();
  await second;
  await third;
  expect(sent).toEqual(["a", "b", "c"]);
});

test("the tunnel's end (SPDY's last frame written, or a cut) closes the WebSocket normally", async () => {
  const ended = tunnelOn([]);
  await new Promise((resolve) => ended.tunnel.end(resolve));
  expect(ended.closedWith()).toBe(1000);
  const cut = tunnelOn([]);
  cut.tunnel.destroy();
  expect(cut.closedWith()).toBe(1000);
});

test("the client's close ends the byte stream both ways, and the closed socket is not closed again", async () => {
  const { tunnel, closedWith } = tunnelOn([]);
  const ended = new Promise((resolve) => tunnel.once("close", resolve));
  tunnel.resume();
  tunnel.gone();
  await ended;
  expect(closedWith()).toBeUndefined();
});
