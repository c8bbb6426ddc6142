/**
 * pods/log over the process runtime's own per-attempt log files, written by real processes and
 * recorded by the SQLite store, read through the route handler on a read-only connection (as under
 * `serve`, with no runtime in the context): follow ends when the container does.
 */
import { containerLogPath } from "../../src/runtime/container-log-file.ts";
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import { realClock } from "../../src/clock.ts";
import { ProcessLayout } from "../../src/runtime/process/process-files.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { openAgentDatabase, type AgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { getLog, logsApi } from "../logs-api-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let dir: string;
let agent: AgentDatabase;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mk-logs-api-"));
  const root = join(dir, "process");
  const layout = new ProcessLayout(root);
  agent = openAgentDatabase(join(dir, "state.db"));
  const store = new SqliteStore({ db: agent.db, clock: realClock, logPathOf: (uid, id) => containerLogPath(layout.containerDir(uid, id)) });
  h = realHarness(new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) }), { store });
});

afterEach(async () => {
  await h.close();
  agent.close();
  rmSync(dir, { recursive: true, force: true });
});

const sh = (name: string, script: string) => container(name, { command: ["sh", "-c", script] });

test("follow streams a running process's lines as written and ends when it exits", async () => {
  await h.kubelet.sync(desired(pod({ name: "tick", restartPolicy: "Never", containers: [sh("tick", "echo tick 1; sleep 0.4; echo tick 2; sleep 0.4; echo tick 3")] })));
  await h.event((e) => e.reason === "Started");
  using api = logsApi(join(dir, "state.db"), realClock);
  const response = await getLog(api, "/api/v1/namespaces/demo/pods/tick-lab/log?follow=true&timestamps=true");
  const chunks: string[] = [];
  for await (const chunk of response.body!) chunks.push(new TextDecoder().decode(chunk));
  const lines = chunks.join("").split("\n");
  expect(lines.pop()).toBe("");
  expect(lines.map((line) => line.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z /, "<time> "))).toEqual(["<time> tick 1", "<time> tick 2", "<time> tick 3"]);
  // Read as they came: more than one chunk, not the whole output once the process ended.
  expect(chunks.length).toBeGreaterThan(1);
  expect(h.events.some((e) => e.reason === "Exited")).toBe(true);
});

test("previous and tailLines read the crashed attempts' files; the CLI reads the same", async () => {
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [sh("crash", 'echo "run at $(date +%s%N)"; echo bye; exit 1')] })));
  await h.count((e) => e.reason === "Exited", 2, 10_000);
  await h.kubelet.idle();
  using api = logsApi(join(dir, "state.db"), realClock);
  const previous = await (await getLog(api, "/api/v1/namespaces/demo/pods/crash-lab/log?previous=true")).text();
  const current = await (await getLog(api, "/api/v1/namespaces/demo/pods/crash-lab/log?tailLines=1")).text();
  expect(previous).toMatch(/^run at \d+\nbye\n$/);
  expect(current).toBe("bye\n");
  let out = "";
  await logsCommand("crash-lab", { db: join(dir, "state.db"), previous: true }, { stdout: (t) => (out += t), stderr: () => {} });
  expect(out).toBe(previous);
});

test("the CLI's logs -f ends by itself when the process exits, with every line", async () => {
  await h.kubelet.sync(desired(pod({ name: "tick", restartPolicy: "Never", containers: [sh("tick", "echo a; sleep 0.5; echo b")] })));
  await h.event((e) => e.reason === "Started");
  let out = "";
  await logsCommand("tick-lab", { db: join(dir, "state.db"), follow: true }, { stdout: (t) => (out += t), stderr: () => {}, intervalMs: 100, signal: new AbortController().signal });
  expect(out).toBe("a\nb\n");
});
