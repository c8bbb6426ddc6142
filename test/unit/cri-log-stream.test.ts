/**
 * pods/log's `stream` (Kubernetes 1.32+ PodLogOptions.stream): validated as the API server does
 * (Stdout, Stderr or All; a tail only with All), served from a CRI log by each record's stream, the
 * other stream's bytes not counted against limitBytes; a log that does not say which stream wrote
 * what (the shell monitor's raw `log`, the engine's text) is a 400 naming why, not both streams
 * passed off as one.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsePodLogQuery } from "../../src/api/resources/pods/log-options.ts";
import { LogStreamsUnavailableError, writeAttemptLogs } from "../../src/logs/attempt-logs.ts";
import type { AttemptRow } from "../../src/store/queries.ts";
import { getLog, logsApi, statusOf } from "../logs-api-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const parse = (query: string) => parsePodLogQuery(new URLSearchParams(query), 0);
const refusal = (query: string) => {
  try {
    parse(query);
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
};

test("stream is Stdout, Stderr or All; a specific one refuses tailLines", () => {
  expect(parse("stream=Stdout").stream).toBe("stdout");
  expect(parse("stream=Stderr").stream).toBe("stderr");
  expect(parse("stream=All").stream).toBeUndefined();
  expect(parse("stream=All&tailLines=2")).not.toHaveProperty("stream");
  expect(parse("stream=All&tailLines=2").tailLines).toBe(2);
  expect(refusal("stream=stdout")).toBe('stream: Unsupported value: "stdout": supported values: "All", "Stderr", "Stdout"');
  expect(refusal("stream=toString")).toContain("Unsupported value");
  expect(refusal("stream=Stderr&tailLines=1")).toBe("`tailLines` and specific `stream` are mutually exclusive for now");
});

const rec = (second: number, stream: "stdout" | "stderr", tag: "F" | "P", content: string) => `2026-12-02T14:05:0${second}.000000000Z ${stream} ${tag} ${content}\n`;
const CRI = rec(1, "stdout", "P", "out-") + rec(2, "stderr", "F", "err one") + rec(3, "stdout", "F", "line") + rec(4, "stderr", "F", "err two");

/** A pod of two containers, `cri` logging to a CRI container.log and `raw` to a legacy raw `log`; the API over its database. */
async function twoLogs() {
  const dir = tempDir();
  const logDir = join(dir.path, "logs");
  const containerDir = (id: string) => join(logDir, id);
  const h = storeHarness(dir.path, { logPathOf: (_uid, id) => join(containerDir(id), id.startsWith("cri-") ? "container.log" : "log") });
  const start = h.runtime.startContainer.bind(h.runtime);
  h.runtime.startContainer = async (config) => {
    const id = await start(config);
    mkdirSync(containerDir(id), { recursive: true });
    if (config.container.name === "cri") writeFileSync(join(containerDir(id), "container.log"), CRI);
    else writeFileSync(join(containerDir(id), "log"), "raw out\nraw err\n");
    return id;
  };
  await h.kubelet.sync(desired(pod({ name: "two", containers: [container("cri"), container("raw")] })));
  await h.advance(0.5);
  const api = logsApi(h.dbPath, h.clock);
  const text = async (query: string) => await (await getLog(api, `/api/v1/namespaces/demo/pods/two-lab/log?${query}`)).text();
  return {
    text,
    status: (query: string) => statusOf(getLog(api, `/api/v1/namespaces/demo/pods/two-lab/log?${query}`)),
    [Symbol.dispose]: () => {
      api[Symbol.dispose]();
      h.agent.close();
      dir[Symbol.dispose]();
    },
  };
}

test("a CRI log serves the stream asked for, its P records joined to their F, the other's bytes not counted by limitBytes", async () => {
  using logs = await twoLogs();
  expect(await logs.text("container=cri")).toBe("out-err one\nline\nerr two\n");
  expect(await logs.text("container=cri&stream=All")).toBe("out-err one\nline\nerr two\n");
  expect(await logs.text("container=cri&stream=Stdout")).toBe("out-line\n");
  expect(await logs.text("container=cri&stream=Stderr")).toBe("err one\nerr two\n");
  expect(await logs.text("container=cri&stream=Stderr&limitBytes=10")).toBe("err one\ner");
  expect(await logs.text("container=cri&stream=Stdout&timestamps=true")).toBe("2026-12-02T14:05:01.000000000Z out-2026-12-02T14:05:03.000000000Z line\n");
});

test("a raw log holds both streams as one: a specific stream is a 400 saying so, All is the whole log", async () => {
  using logs = await twoLogs();
  expect(await logs.text("container=raw&stream=All")).toBe("raw out\nraw err\n");
  const refused = await logs.status("container=raw&stream=Stdout");
  expect(refused).toMatchObject({ code: 400, reason: "BadRequest" });
  expect(refused.message).toContain("stream stdout cannot be told apart: its log file");
  expect(refused.message).toContain("holds both streams as one");
});

test("an attempt whose output is the engine's is refused a specific stream before the engine is asked", async () => {
  const attempt: AttemptRow = { podUid: "u1", container: "web", attempt: 1, runtimeId: "r1", startedAt: 0, finishedAt: 1, exitCode: 0, reason: null, signal: null, logPath: null };
  let asked = false;
  const engine = async () => {
    asked = true;
    throw new Error("not to be asked");
  };
  const reading = writeAttemptLogs(attempt, { stream: "stderr" }, { store: {} as never, clock: {} as never, signal: new AbortController().signal, engine }, () => {});
  await expect(reading).rejects.toBeInstanceOf(LogStreamsUnavailableError);
  expect(asked).toBe(false);
});
