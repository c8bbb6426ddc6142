/**
 * `pods/NAME/attach` on the fake runtime: the container's own stdin and terminal as the kubelet
 * and the engine give them (tty from the spec, stdin only to a container created with it,
 * stdinOnce), the end's Success Status, detaching, and the answers before any upgrade.
 */
import { afterEach, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FOLLOW_BACKSTOP_MS } from "../../src/logs/attempt-logs.ts";
import { attach, attachAgent, openSpdy, openWebSocket } from "../attach-fixtures.ts";
import { waitFor } from "../e2e/helpers.ts";

const open: Disposable[] = [];
afterEach(() => open.splice(0).forEach((agent) => agent[Symbol.dispose]()));

async function agent(options: Parameters<typeof attachAgent>[0] = {}) {
  const made = await attachAgent(options);
  open.push(made);
  return made;
}

const STDIN = 0;
const STDOUT = 1;
const STATUS = 3;
const RESIZE = 4;
const CLOSE = 255;
const SUCCESS = { metadata: {}, status: "Success" };

test("attach -it to a container with a terminal: typing reaches its stdin, output comes back, resizes apply; its exit ends the session with Success", async () => {
  const { h, api } = await agent();
  const { response, webSocket } = await attach(api, "container=shell&stdin=true&stdout=true&tty=true");
  expect(response?.status).toBe(101);
  const client = openWebSocket(webSocket!, h.clock);
  client.send(RESIZE, '{"Width":101,"Height":31}');
  client.send(STDIN, "echo hi\r");
  await waitFor("the echo", () => client.on(STDOUT) === "echo hi\r", 5000);
  const opened = h.runtime.attaches.opened[0]!;
  expect(opened.request).toMatchObject({ stdin: true, tty: true });
  expect(opened.sizes).toEqual([{ width: 101, height: 31 }]);
  h.runtime.finish(h.runtime.running("shell")!.id, 0);
  await client.ended;
  expect(JSON.parse(client.on(STATUS))).toEqual(SUCCESS);
  expect(client.closed?.code).toBe(1000);
});

test("the terminal is the container's, whatever the query says: a container without tty gets none, one with tty gets it without asking", async () => {
  const { h, api } = await agent();
  openWebSocket((await attach(api, "container=pipe&stdin=true&stdout=true&tty=true")).webSocket!, h.clock);
  openWebSocket((await attach(api, "container=shell&stdout=true&stderr=true")).webSocket!, h.clock);
  await waitFor("both attaches", () => h.runtime.attaches.opened.length === 2, 5000);
  expect(h.runtime.attaches.opened.map((opened) => opened.request.tty)).toEqual([false, true]);
});

test("stdin asked of a container created without stdin is dropped, as the engine and containerd drop it: output still flows", async () => {
  const { h, api } = await agent();
  const client = openWebSocket((await attach(api, "container=plain&stdin=true&stdout=true&stderr=true")).webSocket!, h.clock);
  client.send(STDIN, "ignored\n");
  await waitFor("the attach", () => h.runtime.attaches.opened.length === 1, 5000);
  const opened = h.runtime.attaches.opened[0]!;
  expect(opened.request.stdin).toBe(false);
  expect(opened.input).toBe("");
  await opened.stdout("still here\n");
  expect(client.on(STDOUT)).toBe("still here\n");
});

test("stdinOnce without a terminal: the end of the client's stdin closes the container's, and the session lasts until the container exits", async () => {
  const { h, api } = await agent();
  const client = openWebSocket((await attach(api, "container=pipe&stdin=true&stdout=true&stderr=true")).webSocket!, h.clock);
  client.send(STDIN, "echo done\n");
  client.send(CLOSE, [STDIN]);
  await waitFor("the container's stdin closed", () => h.runtime.attaches.opened[0]?.containerStdinClosed, 5000);
  expect(client.closed).toBeUndefined();
  await h.runtime.attaches.opened[0]!.stdout("done\n");
  h.runtime.finish(h.runtime.running("pipe")!.id, 3);
  await client.ended;
  expect(client.on(STDOUT)).toBe("echo done\ndone\n");
  // The exit code is the pod's status's (kubectl run reads it there); the attach itself went well.
  expect(JSON.parse(client.on(STATUS))).toEqual(SUCCESS);
});

test("without stdinOnce the end of stdin detaches: the session ends with Success and the container runs on", async () => {
  const { h, api } = await agent();
  const client = openWebSocket((await attach(api, "container=keep&stdin=true&stdout=true&stderr=true")).webSocket!, h.clock);
  client.send(CLOSE, [STDIN]);
  await client.ended;
  expect(JSON.parse(client.on(STATUS))).toEqual(SUCCESS);
  expect(h.runtime.running("keep")).toBeDefined();
});

test("the client leaving detaches: the attach is aborted, not the container", async () => {
  const { h, api } = await agent();
  const { webSocket } = await attach(api, "container=shell&stdin=true&stdout=true&tty=true");
  const client = openWebSocket(webSocket!, h.clock);
  await waitFor("the attach", () => h.runtime.attaches.opened.length === 1, 5000);
  webSocket!.close(client.socket, 1000, "");
  expect(h.runtime.attaches.opened[0]!.detached).toBe(true);
  expect(h.runtime.running("shell")).toBeDefined();
  expect(h.runtime.calls.filter((call) => call.startsWith("kill"))).toEqual([]);
});

test("over SPDY (kubectl 1.27-1.29): the streams the query asked for, stdin in, output out, Success on the error stream, then all end", async () => {
  const { h, api } = await agent();
  const { response, spdy } = await attach(api, "container=pipe&stdin=true&stdout=true&stderr=true", { spdy: true });
  expect(response?.status).toBe(101);
  expect(spdy?.protocol).toBe("v4.channel.k8s.io");
  const client = openSpdy(spdy!);
  const error = client.open("error");
  const stdin = client.open("stdin");
  const stdout = client.open("stdout");
  client.open("stderr");
  stdin.push("data\n");
  stdin.push(null);
  await waitFor("the container's stdin closed", () => h.runtime.attaches.opened[0]?.containerStdinClosed, 5000);
  h.runtime.finish(h.runtime.running("pipe")!.id, 0);
  await client.ended;
  expect(stdout.written).toBe("data\n");
  expect(JSON.parse(error.written)).toEqual(SUCCESS);
  expect([error.ended, stdout.ended]).toEqual([true, true]);
});

test("a runtime that holds only the output follows the container's log from its end, as logs -f does, until the container exits", async () => {
  const { h, api, dir } = await agent({ logFiles: true });
  h.runtime.attaches.support = () => ({ kind: "output-log" });
  const id = h.runtime.running("plain")!.id;
  const file = join(dir, `${id}.log`);
  writeFileSync(file, "before the attach\n");
  const timers = h.clock.pendingTimers();
  const client = openWebSocket((await attach(api, "container=plain&stdout=true&stderr=true")).webSocket!, h.clock);
  // The follower has read to the end and waits (its backstop timer armed): what comes now is new.
  await waitFor("the follower to wait", () => h.clock.pendingTimers() > timers, 5000);
  appendFileSync(file, "after it\n");
  await waitFor("the new line", () => client.on(STDOUT) === "after it\n", 5000, () => client.on(STDOUT));
  h.runtime.finish(id, 0);
  await h.advance(1);
  // Each step fires the follower's backstop: it looks again, sees the attempt ended, and stops.
  await waitFor("the session's end", () => (h.clock.step(FOLLOW_BACKSTOP_MS), client.closed), 5000);
  expect(h.runtime.attaches.opened).toEqual([]);
  expect(JSON.parse(client.on(STATUS))).toEqual(SUCCESS);
});

test("what the runtime cannot serve is refused before the upgrade, naming the container and the runtime's reason", async () => {
  const { h, api } = await agent();
  h.runtime.attaches.support = ({ stdin }) => (stdin ? { kind: "refused", reason: "this runtime keeps no stdin" } : { kind: "streams" });
  const refused = await attach(api, "container=pipe&stdin=true&stdout=true");
  expect(refused.error).toMatchObject({ code: 400, reason: "BadRequest", message: "cannot attach to container pipe in pod web-lab: this runtime keeps no stdin" });
  expect((await attach(api, "container=pipe&stdout=true")).response?.status).toBe(101);
});

test("the answers before any upgrade: no pod, no running container, a completed pod, no stream, no agent", async () => {
  const { h, api } = await agent();
  expect((await attach(api, "container=shell&stdout=true", { pod: "nope" })).error).toMatchObject({ code: 404, reason: "NotFound", message: 'pods "nope" not found' });
  expect((await attach(api, "container=db&stdout=true")).error).toMatchObject({ code: 400, message: "container db is not valid for pod web-lab" });
  expect((await attach(api, "container=shell")).error).toMatchObject({ code: 400, message: "you must specify at least 1 of stdin, stdout, stderr" });
  const once = await agent({ restartPolicy: "Never" });
  once.h.runtime.finish(once.h.runtime.running("plain")!.id, 0);
  await once.h.advance(1);
  expect((await attach(once.api, "container=plain&stdout=true")).error).toMatchObject({ code: 400, message: "container plain not found in pod web-lab_demo: it is not running" });
  for (const name of ["shell", "pipe", "keep"]) once.h.runtime.finish(once.h.runtime.running(name)!.id, 0);
  await once.h.advance(1);
  expect((await attach(once.api, "container=shell&stdout=true")).error).toMatchObject({ code: 400, message: "cannot attach a container in a completed pod; current phase is Succeeded" });
  const served = await agent({ runtime: false });
  expect((await attach(served.api, "container=shell&stdout=true")).error).toMatchObject({ code: 503, reason: "ServiceUnavailable" });
});
