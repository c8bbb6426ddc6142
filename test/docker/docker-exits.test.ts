/**
 * An exit is answered from the engine's events (issue 15): once a watched container's `die` has
 * arrived, its status (exit code, OOMKilled, the start time an inspect read while it ran) comes
 * without an inspect, which the engine would hold until it had cleaned the container up.
 */
import { afterEach, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import Dockerode from "dockerode";
import { DockerEventWatcher, type EventSource } from "../../src/runtime/docker/docker-events.ts";
import { DockerExitRecords } from "../../src/runtime/docker/docker-exits.ts";
import { useFetchTransport } from "../../src/runtime/docker/docker-transport.ts";
import type { RuntimeEvent } from "../../src/runtime/runtime.ts";
import { FakeClock } from "../fake-clock.ts";
import { bbContainer, describeDocker, docker, DockerTestEnv, testPod } from "./helpers.ts";

/** An engine with one event stream the test writes to. */
class OneStream implements EventSource {
  readonly stream = new PassThrough();
  async getEvents(): Promise<NodeJS.ReadableStream> {
    return this.stream;
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const line = (action: string, id: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ Type: "container", Action: action, Actor: { ID: id, Attributes: { exitCode: "3" } }, time: 1_800_000_000, timeNano: 1_800_000_000_250_000_000, ...extra })}\n`;

async function watched(): Promise<{ engine: OneStream; exits: DockerExitRecords; watcher: DockerEventWatcher; seen: RuntimeEvent[] }> {
  const engine = new OneStream();
  const exits = new DockerExitRecords();
  const watcher = new DockerEventWatcher(engine, new FakeClock(), undefined, exits);
  const seen: RuntimeEvent[] = [];
  watcher.subscribe((event) => seen.push(event));
  await settle();
  return { engine, exits, watcher, seen };
}

test("a die event gives the exit code and the event's time; the start time is the one an inspect read", async () => {
  const { engine, exits, watcher, seen } = await watched();
  exits.running("c1", 1_799_999_990_000);
  exits.running("c2", 1_799_999_990_000);
  engine.stream.write(line("oom", "c2") + line("die", "c1") + line("die", "c2") + line("die", "unseen"));
  await settle();
  expect(seen.map((e) => e.type)).toEqual(["exited", "exited", "exited"]);
  expect(exits.status("c1")).toEqual({ id: "c1", state: "exited", startedAt: 1_799_999_990_000, exitCode: 3, finishedAt: 1_800_000_000_250 });
  expect(exits.status("c2")).toMatchObject({ state: "exited", exitCode: 3, reason: "OOMKilled" });
  // Never seen running: nothing to answer with (the runtime inspects).
  expect(exits.status("unseen")).toBeUndefined();
  watcher.close();
});

test("a start after the exit (a run no inspect has seen), a removal, or a broken stream leave nothing to answer from", async () => {
  const { engine, exits, watcher } = await watched();
  for (const id of ["again", "removed", "kept"]) exits.running(id, 1_799_999_990_000);
  engine.stream.write(line("die", "again") + line("die", "removed") + line("die", "kept") + line("start", "again") + line("destroy", "removed"));
  await settle();
  expect(exits.status("again")).toBeUndefined();
  expect(exits.status("removed")).toBeUndefined();
  expect(exits.status("kept")).toMatchObject({ state: "exited" });
  engine.stream.end();
  await settle();
  expect(exits.status("kept")).toBeUndefined();
  watcher.close();
});

/** An engine client that records each request it has had answered as "METHOD /path" (ids shortened to :id). */
function recordingClient(): { docker: Dockerode; calls: string[] } {
  const client = useFetchTransport(new Dockerode());
  type Send = (request: unknown, context: unknown, data: unknown, callback: (...answer: unknown[]) => void) => void;
  const modem = (client as unknown as { modem: { buildRequest: Send } }).modem;
  const send = modem.buildRequest.bind(modem);
  const calls: string[] = [];
  modem.buildRequest = (request, context, data, callback) => {
    const { method, path } = request as { method: string; path: string };
    send(request, context, data, (...answer: unknown[]) => {
      calls.push(`${method} ${path.split("?")[0]!.replace(/[0-9a-f]{64}/, ":id")}`);
      callback(...answer);
    });
  };
  return { docker: client, calls };
}

describeDocker("DockerRuntime exits from the event stream (real dockerd)", () => {
  const envs: DockerTestEnv[] = [];
  afterEach(async () => {
    for (const env of envs.splice(0)) await env.cleanup();
  });

  /** Starts `script` in a pod of a watched runtime and reads its status once while it runs; `exit()` waits for its exit event. */
  async function runUntilExit(script: string, extra: Parameters<typeof bbContainer>[2] = {}, readWhileRunning = true) {
    const recorded = recordingClient();
    const env = new DockerTestEnv({ docker: recorded.docker });
    envs.push(env);
    const exited = new Set<string>();
    let heard: () => void = () => {};
    env.runtime.watch((event) => {
      if (event.type !== "exited") return;
      exited.add(event.containerId);
      heard();
    });
    const main = bbContainer("main", script, extra);
    const pod = testPod("exits", [main]);
    const id = await env.start(pod, await env.sandbox(pod), main);
    const running = readWhileRunning ? await env.runtime.containerStatus(id) : undefined;
    if (running) expect(running.state).toBe("running");
    const exit = () => new Promise<void>((resolve) => (exited.has(id) ? resolve() : (heard = () => exited.has(id) && resolve())));
    return {
      id,
      running,
      env,
      calls: recorded.calls,
      exit,
      /** `docker kill`, then the runtime's status once the exit was heard (no engine call for it), beside the engine's own state. */
      async killedStatus() {
        await docker.getContainer(id).kill();
        await exit();
        const before = recorded.calls.length;
        const status = await env.runtime.containerStatus(id);
        expect(recorded.calls.slice(before)).toEqual([]);
        return { status, engine: (await docker.getContainer(id).inspect()).State };
      },
    };
  }

  test("a killed container's status comes from its die event, with no inspect after the exit", async () => {
    const run = await runUntilExit("exec sleep 300");
    const { status, engine } = await run.killedStatus();
    expect(status).toMatchObject({ state: "exited", exitCode: engine.ExitCode, startedAt: run.running!.startedAt });
    expect(status.finishedAt).toBeGreaterThanOrEqual(Date.parse(engine.FinishedAt));
  });

  test("the start time is read after the start, off its path: an exit is answered even if nobody asked while it ran", async () => {
    const run = await runUntilExit("exec sleep 300", {}, false);
    const readBack = () => run.calls.filter((call) => call === "GET /containers/:id/json").length;
    const sandboxReads = 1; // the pod IP, before the container was created
    while (readBack() === sandboxReads) await Bun.sleep(10);
    const { status, engine } = await run.killedStatus();
    expect(status).toMatchObject({ state: "exited", exitCode: 137, startedAt: Date.parse(engine.StartedAt) });
  });

  test("a container over its memory limit is OOMKilled by the events as by the inspect", async () => {
    // The shell holds the whole substitution in memory: about 50 MB against a 16 MiB limit, no swap.
    const run = await runUntilExit(`sleep 1; x=$(head -c 50000000 /dev/zero | tr '\\0' a); echo survived`, {
      resources: { limits: { memory: "16Mi" }, requests: { memory: "16Mi" } },
    });
    await run.exit();
    const before = run.calls.length;
    expect(await run.env.runtime.containerStatus(run.id)).toMatchObject({ state: "exited", exitCode: 137, reason: "OOMKilled" });
    expect(run.calls.slice(before)).toEqual([]);
    expect((await docker.getContainer(run.id).inspect()).State.OOMKilled).toBe(true);
  }, 60_000);
});
