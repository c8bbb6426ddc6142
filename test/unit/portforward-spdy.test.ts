/**
 * The port-forward session on the wire: a real SPDY connection over loopback, the client opening
 * stream pairs as kubectl does (test/portforward-client.ts), and "pods" that are loopback listeners
 * of the test's own. What travels on the data and error streams, how the headers pair and reject
 * streams, and that nothing is left open once the client goes.
 */
import { afterEach, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { acceptSpdy, STREAM_CREATION_TIMEOUT_MS } from "../../src/api/http/spdy.ts";
import { PortForwardSession, rejectedStream, requestIdOf } from "../../src/api/portforward/portforward-session.ts";
import { realClock, type Clock } from "../../src/clock.ts";
import { freePort } from "../e2e/helpers.ts";
import { FakeClock } from "../fake-clock.ts";
import { podPort as makePodPort } from "../pod-ports.ts";
import { PortForwardClient, readAll } from "../portforward-client.ts";

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** A pod's port (test/pod-ports.ts), closed after the test. */
async function podPort(name: string, options: { hold?: boolean } = {}) {
  const pod = await makePodPort(name, options);
  closers.push(() => pod.close());
  return pod;
}

/** A loopback server whose every connection is a port-forward session on `clock`; `ended` counts the sessions over. */
async function serve(clock: Clock = realClock, maxConnections?: number) {
  const sessions: PortForwardSession[] = [];
  let ended = 0;
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    const session = new PortForwardSession({ address: (port) => ({ host: "127.0.0.1", port }), sandboxId: "sandbox-1", clock, onEnd: () => (ended += 1), maxConnections });
    sessions.push(session);
    session.open(acceptSpdy(socket, clock));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const client = await PortForwardClient.dial(port);
  closers.push(() => client.close());
  return { client, sessions, ended: () => ended };
}

test("a pair carries the request to the pod and its answer back; the pod's close ends the data stream, then the error stream, empty", async () => {
  const pod = await podPort("web");
  const { client } = await serve();
  expect(await client.exchange(pod.port, "0", "GET /")).toEqual({ data: "web:GET /", error: "" });
});

test("a port nothing listens on: the error stream says so in the kubelet's words, both streams end, and the session serves the next pair", async () => {
  const dead = await freePort();
  const pod = await podPort("web");
  const { client } = await serve();
  expect(await client.exchange(dead, "0", "GET /")).toEqual({
    data: "",
    error: `error forwarding port ${dead} to pod sandbox-1, uid : dial tcp4 127.0.0.1:${dead}: connect: connection refused`,
  });
  expect(await client.exchange(pod.port, "1", "GET /")).toEqual({ data: "web:GET /", error: "" });
});

test("a pod that resets the connection mid-way: the error stream says so in Go's words for a failed read", async () => {
  // Bun's terminate() closes with SO_LINGER 0: a RST, which node:net's resetAndDestroy does not send under Bun.
  const pod = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data: (socket) => socket.terminate() } });
  closers.push(() => pod.stop(true));
  const { client } = await serve();
  const { data, error } = await client.exchange(pod.port, "0", "GET /");
  expect(data).toBe("");
  expect(error).toMatch(new RegExp(`^error forwarding port ${pod.port} to pod sandbox-1, uid : read tcp4 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:${pod.port}: read: connection reset by peer$`));
});

test("pairs are matched by requestID, however their streams interleave, each to its own port", async () => {
  const [a, b] = [await podPort("a"), await podPort("b")];
  const { client } = await serve();
  const errorA = (await client.open({ streamtype: "error", port: String(a.port), requestid: "7" })).stream;
  const errorB = (await client.open({ streamtype: "error", port: String(b.port), requestid: "8" })).stream;
  const dataB = (await client.open({ streamtype: "data", port: String(b.port), requestid: "8" })).stream;
  const dataA = (await client.open({ streamtype: "data", port: String(a.port), requestid: "7" })).stream;
  const texts = [readAll(dataA), readAll(dataB), readAll(errorA), readAll(errorB)];
  for (const stream of [errorA, errorB]) stream.end();
  dataA.write("x");
  dataB.write("y");
  expect(await Promise.all(texts)).toEqual(["a:x", "b:y", "", ""]);
});

test("50 connections forwarded at once over one session, to two ports, each get their own answer", async () => {
  const [a, b] = [await podPort("a"), await podPort("b")];
  const { client } = await serve();
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => client.exchange(i % 2 ? b.port : a.port, String(i), `req-${i}`)));
  expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => ({ data: `${i % 2 ? "b" : "a"}:req-${i}`, error: "" })));
});

test("16 MiB each way arrive whole, whichever side is faster", async () => {
  const size = 16 * 1024 * 1024;
  const server = createServer((socket) => {
    let received = 0;
    socket.on("data", (chunk) => {
      received += chunk.length;
      if (received === size) socket.end(Buffer.alloc(size, "p"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  const { client } = await serve();
  const pair = await client.forward((server.address() as { port: number }).port, "0");
  pair.data.write(Buffer.alloc(size, "c"));
  const answer = await pair.dataText;
  expect(answer.length).toBe(size);
  expect(answer).toBe("p".repeat(size));
  expect(await pair.errorText).toBe("");
}, 30_000);

test("connections beyond the session's bound are refused on their error stream; one ending frees its place", async () => {
  const pod = await podPort("web", { hold: true });
  const { client } = await serve(realClock, 2);
  const held = await Promise.all([0, 1].map((i) => client.forward(pod.port, String(i))));
  for (const pair of held) pair.data.write("x");
  await pod.until(2);
  expect(await client.exchange(pod.port, "2", "x")).toEqual({ data: "", error: "too many connections forwarded at once on this session (limit 2)" });
  held[0]!.data.destroy();
  await pod.until(1);
  const third = await client.forward(pod.port, "3");
  third.data.write("y");
  expect(await new Promise<string>((resolve) => third.data.once("data", (chunk: Buffer) => resolve(String(chunk))))).toBe("web:y");
});

test("the client's end of its data stream half-closes the pod's socket, and the pod's answer after it still arrives", async () => {
  // Half-open allowed: Node would otherwise end the socket itself at the client's end.
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    socket.on("end", () => socket.end(`got ${received.length} bytes`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  const { client } = await serve();
  const pair = await client.forward((server.address() as { port: number }).port, "0");
  pair.data.end("12345");
  expect(await pair.dataText).toBe("got 5 bytes");
  expect(await pair.errorText).toBe("");
});

test.each([
  [{ streamtype: "data", requestid: "0" }, `"port" header is required`],
  [{ streamtype: "data", port: "0", requestid: "0" }, `port "0" must be > 0`],
  [{ streamtype: "data", port: "http", requestid: "0" }, `unable to parse "http" as a port`],
  [{ streamtype: "data", port: "65536", requestid: "0" }, `unable to parse "65536" as a port`],
  [{ port: "80", requestid: "0" }, `"streamType" header is required`],
  [{ streamtype: "stdout", port: "80", requestid: "0" }, `invalid stream type "stdout"`],
])("a stream with headers %j is reset, unanswered (the kubelet: %s)", async (headers, why) => {
  expect(rejectedStream(headers)).toBe(why);
  const { client } = await serve();
  expect((await client.open(headers)).replied).toBe(false);
});

test("a client that sends no requestID has its pairs guessed from stream ids: an error stream and the data stream opened next", () => {
  expect(requestIdOf({ id: 5, headers: {} }, "error")).toBe("5");
  expect(requestIdOf({ id: 7, headers: {} }, "data")).toBe("5");
  expect(requestIdOf({ id: 7, headers: { requestid: "3" } }, "data")).toBe("3");
});

test("a second stream of a type for one request is answered but refused, in the kubelet's words on the pair's error stream", async () => {
  const pod = await podPort("web");
  const { client } = await serve();
  const headers = { streamtype: "error", port: String(pod.port), requestid: "1" };
  const error = (await client.open(headers)).stream;
  error.end();
  const errorText = readAll(error);
  expect((await client.open(headers)).replied).toBe(true);
  const data = (await client.open({ ...headers, streamtype: "data" })).stream;
  data.write("x");
  expect(await readAll(data)).toBe("web:x");
  expect(await errorText).toBe("error processing stream for request 1: error stream already assigned");
});

test("a pair whose data stream never comes is told so on its error stream after STREAM_CREATION_TIMEOUT_MS, and ended", async () => {
  const clock = new FakeClock();
  const { client } = await serve(clock);
  const error = (await client.open({ streamtype: "error", port: "80", requestid: "4" })).stream;
  error.end();
  const text = readAll(error);
  clock.step(STREAM_CREATION_TIMEOUT_MS - 1);
  clock.step(1);
  expect(await text).toBe("(request=4) timed out waiting for streams");
});

test("the client going away cuts every forwarded connection (no socket left to the pod) and ends the session once", async () => {
  const pod = await podPort("web", { hold: true });
  const { client, sessions, ended } = await serve();
  const pairs = await Promise.all([0, 1, 2].map((i) => client.forward(pod.port, String(i))));
  for (const pair of pairs) pair.data.write("hello");
  await pod.until(3);
  expect(sessions[0]!.connections).toBe(3);
  client.close();
  await pod.until(0);
  expect(sessions[0]!.connections).toBe(0);
  expect(ended()).toBe(1);
});
