/**
 * The SPDY exec session on the wire, against a client that reads frames as kubectl's spdystream
 * does: it opens one stream at a time, waiting for each one's SYN_REPLY, and stops reading at the
 * first GOAWAY (frames after it are never seen). Server and client are real spdy-transport
 * connections over a loopback socket; the command is a stand-in that answers at once, as a quick
 * `echo` on a loaded machine does before a slow SYN_REPLY's headers are compressed.
 */
import { afterEach, expect, test } from "bun:test";
import { createServer, connect, type Server, type Socket } from "node:net";
// @ts-expect-error spdy-transport ships no types
import transport from "spdy-transport";
import type { ExecOptions } from "../../src/api/streaming/exec-protocol.ts";
import { ExecSpdySession, STREAM_CREATION_TIMEOUT_MS } from "../../src/api/streaming/exec-spdy-session.ts";
import { acceptSpdy, CLOSE_GRACE_MS } from "../../src/api/http/spdy.ts";
import { realClock, type Clock } from "../../src/clock.ts";
import { FakeClock } from "../fake-clock.ts";
import type { ExecSession, ExecStreamRequest } from "../../src/runtime/runtime.ts";

interface Frame {
  type: string;
  id?: number;
  fin?: boolean;
  data?: Buffer;
}

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** A command that writes `output` and exits 0 as soon as it is started. */
function quickCommand(output: string) {
  const started: ExecStreamRequest[] = [];
  const runtime = {
    async execStream(_id: string, request: ExecStreamRequest): Promise<ExecSession> {
      started.push(request);
      await request.output("stdout", new TextEncoder().encode(output));
      return { write() {}, closeStdin() {}, resize: async () => {}, exited: Promise.resolve(0) };
    },
  };
  return { runtime, started };
}

/** A loopback server whose every connection is an exec session's SPDY connection, its timers on `clock`. */
async function serve(options: ExecOptions, runtime: ReturnType<typeof quickCommand>["runtime"], clock: Clock): Promise<{ port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    new ExecSpdySession({ runtime, containerId: "c1", options, onEnd: () => {} }, clock).open(acceptSpdy(socket, clock));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, sockets };
}

/** What spdystream makes of the frames it read, per stream id: the reply, the data, the end. */
interface Seen {
  replied: boolean;
  data: string;
  ended: boolean;
}

/**
 * kubectl's side: opens `types` one after another (each once the previous one's reply came), and
 * reads frames up to the first GOAWAY, as spdystream's reader does; resolves, with what it saw of
 * each stream by type, once the server said GOAWAY or closed, or every stream opened has ended;
 * `opened` is called once every stream is open (and answered, unless the connection ended).
 */
async function spdystreamClient(port: number, types: string[], opened: () => void = () => {}): Promise<{ seen: Record<string, Seen>; closed: Promise<void> }> {
  const socket = connect(port, "127.0.0.1");
  closers.push(() => socket.destroy());
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise((resolve) => socket.once("connect", resolve));
  const client = transport.connection.create(socket, { protocol: "spdy", isServer: false });
  client.start(3);
  client.on("error", () => {});
  const seen = new Map<number, Seen>();
  let goneAway = false;
  let over: () => void = () => {};
  const done = new Promise<void>((resolve) => (over = resolve));
  socket.on("close", () => over());
  client.on("frame", (frame: Frame) => {
    if (goneAway) return;
    if (frame.type === "GOAWAY") {
      goneAway = true;
      return over();
    }
    const stream = frame.id === undefined ? undefined : seen.get(frame.id);
    if (!stream) return;
    if (frame.type === "HEADERS") stream.replied = true;
    if (frame.type === "DATA") {
      stream.data += frame.data?.toString() ?? "";
      if (frame.fin) stream.ended = true;
    }
    if ([...seen.values()].length === types.length && [...seen.values()].every((each) => each.ended)) over();
  });
  const ids: Record<string, number> = {};
  for (const type of types) {
    const stream = await new Promise<{ id: number; on(event: string, handler: () => void): unknown; resume(): void }>((resolve, reject) => {
      client.request({ method: "POST", path: "/", headers: { streamtype: type } }, (error: Error | null, opened: never) => (error ? reject(error) : resolve(opened)));
    });
    ids[type] = stream.id;
    seen.set(stream.id, { replied: false, data: "", ended: false });
    stream.on("error", () => {});
    stream.resume();
    // spdystream's CreateStream waits for the reply before the next stream is opened.
    await Promise.race([new Promise<void>((resolve) => stream.on("response", resolve)), done]);
  }
  opened();
  await done;
  return { seen: Object.fromEntries(types.map((type) => [type, seen.get(ids[type]!)!])), closed };
}

const PLAIN: ExecOptions = { command: ["echo", "hi"], stdin: false, stdout: true, stderr: true, tty: false };

test("every stream's reply, the output, the Status and every stream's end reach a client that stops reading at GOAWAY", async () => {
  // The race is lost often but not every time: a few sessions make the test fail on the code as it was.
  for (let attempt = 0; attempt < 10; attempt++) {
    const command = quickCommand("hi\n");
    const { port } = await serve(PLAIN, command.runtime, realClock);
    expect((await spdystreamClient(port, ["error", "stdout", "stderr"])).seen).toEqual({
      error: { replied: true, data: JSON.stringify({ metadata: {}, status: "Success" }), ended: true },
      stdout: { replied: true, data: "hi\n", ended: true },
      stderr: { replied: true, data: "", ended: true },
    });
    closers.splice(0).forEach((close) => close());
  }
});

test("a client that keeps the connection after reading every stream's end has it cut CLOSE_GRACE_MS later", async () => {
  const clock = new FakeClock();
  const { port } = await serve(PLAIN, quickCommand("hi\n").runtime, clock);
  const { seen, closed } = await spdystreamClient(port, ["error", "stdout", "stderr"]);
  expect(seen.stdout).toEqual({ replied: true, data: "hi\n", ended: true });
  clock.step(CLOSE_GRACE_MS);
  await closed;
});

test("a client that opens too few streams gets a Status naming the missing ones after STREAM_CREATION_TIMEOUT_MS, then the connection is cut", async () => {
  const clock = new FakeClock();
  const command = quickCommand("hi\n");
  const { port } = await serve(PLAIN, command.runtime, clock);
  const { seen, closed } = await spdystreamClient(port, ["error", "stdout"], () => clock.step(STREAM_CREATION_TIMEOUT_MS));
  expect(command.started).toHaveLength(0);
  expect(JSON.parse(seen.error!.data)).toMatchObject({ status: "Failure", message: "Internal error occurred: timed out waiting for the client to create streams (stderr)" });
  expect(seen.error!.ended && seen.stdout!.ended).toBe(true);
  clock.step(CLOSE_GRACE_MS);
  await closed;
});
