import { afterEach, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type Dockerode from "dockerode";
import { DockerEventWatcher, reconnectDelay, type EventSource } from "../../src/runtime/docker/docker-events.ts";
import type { RuntimeEvent } from "../../src/runtime/runtime.ts";
import { FakeClock } from "../fake-clock.ts";
import { bbContainer, DockerTestEnv, describeDocker, testPod } from "./helpers.ts";

/** An engine whose event streams the test writes to and ends, recording each getEvents call. */
class ScriptedEngine implements EventSource {
  readonly calls: Dockerode.GetEventsOptions[] = [];
  readonly streams: PassThrough[] = [];
  failNext = 0;

  async getEvents(options?: Dockerode.GetEventsOptions): Promise<NodeJS.ReadableStream> {
    this.calls.push(options ?? {});
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error("connect ECONNREFUSED /var/run/docker.sock");
    }
    const stream = new PassThrough();
    this.streams.push(stream);
    return stream;
  }

  current(): PassThrough {
    return this.streams[this.streams.length - 1] as PassThrough;
  }
}

/** Lets promise callbacks and stream events run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("engine lines become started/exited events, split lines included, other actions ignored", async () => {
  const engine = new ScriptedEngine();
  const watcher = new DockerEventWatcher(engine, new FakeClock());
  const seen: RuntimeEvent[] = [];
  watcher.subscribe((e) => seen.push(e));
  await settle();
  expect(engine.calls[0]?.filters).toEqual({
    type: ["container"],
    event: ["start", "die", "oom", "destroy"],
    label: ["io.minikubelet.managed=true"],
  });
  const start = JSON.stringify({ Type: "container", Action: "start", Actor: { ID: "c1" }, time: 100 });
  const die = JSON.stringify({ Type: "container", Action: "die", Actor: { ID: "c1" }, time: 101 });
  engine.current().write(`${start}\n${die.slice(0, 10)}`);
  engine.current().write(`${die.slice(10)}\n${JSON.stringify({ Action: "create", Actor: { ID: "c2" } })}\n`);
  await settle();
  expect(seen).toEqual([
    { type: "started", containerId: "c1" },
    { type: "exited", containerId: "c1" },
  ]);
  watcher.close();
});

test("a broken stream reports unhealthy, reconnects with back-off since the last event, then healthy", async () => {
  const engine = new ScriptedEngine();
  const clock = new FakeClock();
  const watcher = new DockerEventWatcher(engine, clock);
  const seen: RuntimeEvent[] = [];
  watcher.subscribe((e) => seen.push(e));
  await settle();
  engine.current().write(`${JSON.stringify({ Action: "die", Actor: { ID: "c1" }, time: 500 })}\n`);
  await settle();

  engine.failNext = 1; // dockerd is still down at the first reconnect
  engine.current().end();
  await settle();
  expect(seen.at(-1)).toMatchObject({ type: "health", healthy: false });
  expect(engine.calls).toHaveLength(1);

  clock.step(reconnectDelay(0));
  await settle();
  expect(engine.calls).toHaveLength(2); // refused: one health:false only, next try later
  expect(seen.filter((e) => e.type === "health")).toHaveLength(1);

  clock.step(reconnectDelay(1) - 1);
  await settle();
  expect(engine.calls).toHaveLength(2);
  clock.step(1);
  await settle();
  expect(engine.calls).toHaveLength(3);
  expect(engine.calls[2]?.since).toBe(500);
  expect(seen.at(-1)).toEqual({ type: "health", healthy: true, message: "docker events stream reconnected" });

  engine.current().write(`${JSON.stringify({ Action: "start", Actor: { ID: "c2" }, time: 502 })}\n`);
  await settle();
  expect(seen.at(-1)).toEqual({ type: "started", containerId: "c2" });

  watcher.close();
  await settle();
  expect(clock.pendingTimers()).toBe(0);
  expect(engine.current().destroyed).toBe(true);
});

test("reconnect delays double from 250ms and stop at 5s", () => {
  expect([0, 1, 2, 3, 4, 5, 6, 50].map(reconnectDelay)).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
});

describeDocker("DockerRuntime events (real dockerd)", () => {
  let env: DockerTestEnv;
  afterEach(async () => {
    await env.cleanup();
  });

  test("the events stream delivers a container's start and exit", async () => {
    env = new DockerTestEnv();
    const seen: RuntimeEvent[] = [];
    let exited: (id: string) => void = () => {};
    const exitedId = new Promise<string>((resolve) => (exited = resolve));
    const stop = env.runtime.watch((event) => {
      seen.push(event);
      if (event.type === "exited") exited(event.containerId);
    });
    const quick = bbContainer("quick", "exit 2");
    const pod = testPod("events", [quick]);
    const sandbox = await env.sandbox(pod);
    const id = await env.start(pod, sandbox, quick);
    expect(await exitedId).toBe(id);
    expect(seen).toContainEqual({ type: "started", containerId: id });
    expect((await env.runtime.containerStatus(id)).exitCode).toBe(2);
    stop();
  });
});
