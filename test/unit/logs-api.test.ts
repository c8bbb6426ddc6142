/**
 * pods/log through the route handler, over a real agent database whose attempts name log files (as
 * the process runtime's do), on the fake runtime and fake clock: container and attempt choice, the
 * kubelet's options, and its refusals in the API server's words.
 */
import { expect, test } from "bun:test";
import { appendFileSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import { FOLLOW_BACKSTOP_MS } from "../../src/logs/attempt-logs.ts";
import { rfc3339NanoFixed } from "../../src/logs/timestamps.ts";
import { getLog, logsApi, statusOf } from "../logs-api-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const LOG_PATH = "/api/v1/namespaces/demo/pods/crash-lab/log";

/** A harness whose attempts keep log files, as the process runtime's do: each writes two lines at its start. */
function loggingHarness(dir: string) {
  const logDir = join(dir, "logs");
  mkdirSync(logDir);
  const h = storeHarness(dir, { logPathOf: (_uid, id) => join(logDir, id) });
  const logFiles: string[] = [];
  const start = h.runtime.startContainer.bind(h.runtime);
  h.runtime.startContainer = async (config) => {
    const id = await start(config);
    const prefix = config.container.name === "crash" ? "" : `${config.container.name} `;
    logFiles[config.attempt] = join(logDir, id);
    writeFileSync(join(logDir, id), `${prefix}line 1 of attempt ${config.attempt}\n${prefix}line 2 of attempt ${config.attempt}\n`);
    return id;
  };
  return { ...h, logFiles };
}

/** A pod `crash-lab` whose container `crash` exits 1 after 1s. */
async function crashing(dir: string) {
  const h = loggingHarness(dir);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
  return h;
}

test("the current attempt's output is a 200 text/plain of its raw bytes; previous is the attempt before", async () => {
  using dir = tempDir();
  const h = await crashing(dir.path);
  await h.advance(1.5);
  using api = logsApi(h.dbPath, h.clock);
  const current = await getLog(api, LOG_PATH);
  expect(current.status).toBe(200);
  expect(current.headers.get("Content-Type")).toBe("text/plain");
  expect(await current.text()).toBe("line 1 of attempt 1\nline 2 of attempt 1\n");
  expect(await (await getLog(api, `${LOG_PATH}?container=crash&previous=true`)).text()).toBe("line 1 of attempt 0\nline 2 of attempt 0\n");
  h.agent.close();
});

test("tailLines, limitBytes, timestamps and sinceSeconds apply in the kubelet's order", async () => {
  using dir = tempDir();
  const h = await crashing(dir.path);
  await h.advance(0.5);
  using api = logsApi(h.dbPath, h.clock);
  expect(await (await getLog(api, `${LOG_PATH}?tailLines=1`)).text()).toBe("line 2 of attempt 0\n");
  expect(await (await getLog(api, `${LOG_PATH}?tailLines=0`)).text()).toBe("");
  expect(await (await getLog(api, `${LOG_PATH}?limitBytes=8`)).text()).toBe("line 1 o");
  // The process runtime's file has no per-line times: its lines carry the file's last write.
  const writtenAt = Math.floor(h.clock.now() / 1000) * 1000 - 2 * 3600_000 + 250;
  utimesSync(h.logFiles[0]!, writtenAt / 1000, writtenAt / 1000);
  const stamp = rfc3339NanoFixed(writtenAt);
  expect(stamp).toEndWith(".250000000Z");
  expect(await (await getLog(api, `${LOG_PATH}?timestamps=true&tailLines=1`)).text()).toBe(`${stamp} line 2 of attempt 0\n`);
  const stamped = await (await getLog(api, `${LOG_PATH}?timestamps=true&limitBytes=${stamp.length + 7}`)).text();
  expect(stamped).toBe(`${stamp} line 1`);
  // Written two hours before now: nothing since an hour ago, all of it since three hours ago.
  expect(await (await getLog(api, `${LOG_PATH}?sinceSeconds=3600`)).text()).toBe("");
  expect(await (await getLog(api, `${LOG_PATH}?sinceSeconds=10800&tailLines=1`)).text()).toBe("line 2 of attempt 0\n");
  expect(await (await getLog(api, `${LOG_PATH}?sinceTime=${rfc3339NanoFixed(writtenAt - 60_000)}&tailLines=1`)).text()).toBe("line 2 of attempt 0\n");
  expect(await (await getLog(api, `${LOG_PATH}?sinceTime=${rfc3339NanoFixed(writtenAt + 60_000)}`)).text()).toBe("");
  h.agent.close();
});

test("timestamps are RFC3339NanoFixed, nine fraction digits always, as the kubelet writes them", () => {
  expect(rfc3339NanoFixed(Date.parse("2026-03-01T10:00:00.000Z"))).toBe("2026-03-01T10:00:00.000000000Z");
  expect(rfc3339NanoFixed(Date.parse("2026-03-01T10:00:00.120Z"))).toBe("2026-03-01T10:00:00.120000000Z");
});

test("refusals are the API server's and kubelet's: missing pod, no previous, bad container, bad parameters", async () => {
  using dir = tempDir();
  const h = await crashing(dir.path);
  await h.advance(0.5);
  using api = logsApi(h.dbPath, h.clock);
  expect(await statusOf(getLog(api, "/api/v1/namespaces/demo/pods/nope/log"))).toEqual({ code: 404, reason: "NotFound", message: 'pods "nope" not found' });
  expect(await statusOf(getLog(api, "/api/v1/namespaces/other/pods/crash-lab/log"))).toEqual({ code: 404, reason: "NotFound", message: 'pods "crash-lab" not found' });
  expect(await statusOf(getLog(api, `${LOG_PATH}?previous=true`))).toEqual({
    code: 400,
    reason: "BadRequest",
    message: 'previous terminated container "crash" in pod "crash-lab" not found',
  });
  expect((await statusOf(getLog(api, `${LOG_PATH}?container=zzz`))).message).toBe("container zzz is not valid for pod crash-lab");
  const bad = async (query: string) => (await statusOf(getLog(api, `${LOG_PATH}?${query}`))).message;
  expect(await bad("tailLines=-1")).toBe("tailLines: Invalid value: -1: must be greater than or equal to 0");
  expect(await bad("tailLines=ten")).toBe('tailLines: Invalid value: "ten": must be a whole number');
  expect(await bad("limitBytes=0")).toBe("limitBytes: Invalid value: 0: must be greater than 0");
  expect(await bad("sinceSeconds=0")).toBe("sinceSeconds: Invalid value: 0: must be greater than 0");
  expect(await bad("sinceTime=yesterday")).toBe('sinceTime: Invalid value: "yesterday": must be an RFC3339 time, e.g. 2006-01-02T15:04:05Z');
  expect(await bad("sinceSeconds=5&sinceTime=2026-03-01T10:00:00Z")).toBe("at most one of `sinceTime` or `sinceSeconds` may be specified");
  h.agent.close();
});

test("several containers: the default-container annotation, else a 400 naming the choices", async () => {
  using dir = tempDir();
  const h = loggingHarness(dir.path);
  const plain = pod({ name: "two", containers: [container("a"), container("b")], init: [container("setup")] });
  const annotated = pod({ name: "pick", containers: [container("a"), container("b")] });
  annotated.annotations = { "kubectl.kubernetes.io/default-container": "b" };
  await h.kubelet.sync(desired(plain, annotated));
  await h.advance(0.5);
  using api = logsApi(h.dbPath, h.clock);
  expect(await statusOf(getLog(api, "/api/v1/namespaces/demo/pods/two-lab/log"))).toEqual({
    code: 400,
    reason: "BadRequest",
    message: "a container name must be specified for pod two-lab, choose one of: [a b] or one of the init containers: [setup]",
  });
  expect(await (await getLog(api, "/api/v1/namespaces/demo/pods/pick-lab/log")).text()).toBe("b line 1 of attempt 0\nb line 2 of attempt 0\n");
  expect(await (await getLog(api, "/api/v1/namespaces/demo/pods/two-lab/log?container=setup")).text()).toBe("setup line 1 of attempt 0\nsetup line 2 of attempt 0\n");
  h.agent.close();
});

test("the CLI's logs defaults to the first container and names the others as kubectl's AllContainerNames does", async () => {
  using dir = tempDir();
  const h = loggingHarness(dir.path);
  h.runtime.behaviours.set("setup", { exitAfterMs: 100, exitCode: 0 });
  await h.kubelet.sync(desired(pod({ name: "two", containers: [container("a"), container("b")], init: [container("setup")] })));
  await h.advance(2);
  let out = "";
  let err = "";
  await logsCommand("two-lab", { db: h.dbPath }, { clock: h.clock, stdout: (t) => (out += t), stderr: (t) => (err += t) });
  expect(err).toBe('Defaulted container "a" out of: a, b, setup (init)\n');
  expect(out).toBe("a line 1 of attempt 0\na line 2 of attempt 0\n");
  h.agent.close();
});

test("a container that never started is waiting to start, with its reason, or not available without a status", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  h.runtime.missingImages.add("nowhere:1");
  await h.kubelet.sync(desired(pod({ name: "pull", containers: [container("app", { image: "nowhere:1" })] })));
  await h.advance(0.5);
  using api = logsApi(h.dbPath, h.clock);
  expect(await statusOf(getLog(api, "/api/v1/namespaces/demo/pods/pull-lab/log"))).toEqual({
    code: 400,
    reason: "BadRequest",
    message: expect.stringMatching(/^container "app" in pod "pull-lab" is waiting to start: (image can't be pulled|trying and failing to pull image)$/),
  });
  // A pod not yet reporting the container at all: the kubelet's "not available".
  h.agent.db.run("UPDATE pods SET object_json = json_remove(object_json, '$.status.containerStatuses') WHERE name = 'pull-lab'");
  expect((await statusOf(getLog(api, "/api/v1/namespaces/demo/pods/pull-lab/log"))).message).toBe('container "app" in pod "pull-lab" is not available');
  h.agent.close();
});

test("follow streams what the attempt writes and ends when it exits; a client leaving ends it too", async () => {
  using dir = tempDir();
  const h = await crashing(dir.path);
  await h.advance(0.1);
  using api = logsApi(h.dbPath, h.clock);
  const response = await getLog(api, `${LOG_PATH}?follow=true&tailLines=1`);
  const reader = response.body!.getReader();
  const decode = new TextDecoder();
  expect(decode.decode((await reader.read()).value)).toBe("line 2 of attempt 0\n");
  appendFileSync(h.logFiles[0]!, "line 3 of attempt 0\n");
  await h.advance(0.3);
  expect(decode.decode((await reader.read()).value)).toBe("line 3 of attempt 0\n");
  appendFileSync(h.logFiles[0]!, "last words\n");
  // The exit is recorded within this; with no commit feed here (as under `serve`), the follower sees it at its backstop check.
  await h.advance(1 + FOLLOW_BACKSTOP_MS / 1000);
  expect(decode.decode((await reader.read()).value)).toBe("last words\n");
  expect((await reader.read()).done).toBe(true);

  const leaving = new AbortController();
  const second = await getLog(api, `${LOG_PATH}?follow=true`, leaving.signal);
  const secondReader = second.body!.getReader();
  expect(decode.decode((await secondReader.read()).value)).toBe("line 1 of attempt 1\nline 2 of attempt 1\n");
  leaving.abort();
  await h.advance(0.3);
  expect((await secondReader.read()).done).toBe(true);
  h.agent.close();
});

test("a docker attempt's output with no engine answering is a 503 saying where it looked", async () => {
  using dir = tempDir();
  // No log files: the attempts' output is the engine's, as on a docker-runtime database under `serve`.
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(0.5);
  using api = logsApi(h.dbPath, h.clock);
  const saved = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = `unix://${join(dir.path, "no-engine.sock")}`;
  try {
    expect(await statusOf(getLog(api, "/api/v1/namespaces/demo/pods/web-lab/log"))).toEqual({
      code: 503,
      reason: "ServiceUnavailable",
      message: expect.stringMatching(/^logs of container "web" attempt 0: docker container web-0-\d+: docker engine at .*no-engine\.sock is unreachable: .* \(a docker container's output is read from the engine\)$/),
    });
  } finally {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  }
  h.agent.close();
});
