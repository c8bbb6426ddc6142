import { afterEach, beforeEach, expect, test } from "bun:test";
import { refusedPodObject } from "../../src/v1/refused-pod.ts";
import { runCLI } from "../../src/cli/cli.ts";
import { triageCommand } from "../../src/cli/triage.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { triageHarness } from "../triage-fixtures.ts";
import { captureOutput } from "../capture-output.ts";

let stdout: string;
let stderr: string;
let output: { restore(): void };

beforeEach(() => {
  stdout = "";
  stderr = "";
  output = captureOutput(
    (text) => (stdout += text),
    (text) => text.startsWith("agent not running") || (stderr += text),
  );
});

afterEach(() => output.restore());

async function crashLoop(dir: string) {
  const h = triageHarness(dir);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash", { command: ["sh", "-c", "echo crashing; exit 1"] })] })));
  await h.advance(30);
  return h;
}

const EXPECTED = `Pod:        demo/crash-lab (phase Running, STATUS Error, restartPolicy Always)
Container:  crash (app container), restarts 2, terminated (exit code 1, Error)

Verdict:
  Application error: the program exited with code 1 after 1s, on its own
  A crash, not a probe: no Killing event between its start and its exit, so nothing of ours stopped it.

Evidence:
  2026-01-01T12:00:13Z  state.terminated (attempt 2): exit code 1 (Error), ran 1s
  2026-01-01T12:00:00Z  attempts: 3 starts since 2026-01-01T12:00:00Z; 3 x exit 1 (Error)
  2026-01-01T12:00:01Z  attempt 0: exited 1 (Error) after 1s
  2026-01-01T12:00:02Z  attempt 1: exited 1 (Error) after 1s
  2026-01-01T12:00:13Z  attempt 2: exited 1 (Error) after 1s
  2026-01-01T12:00:13Z  event Warning Exited (x3 since 2026-01-01T12:00:01Z): Container crash exited with code 1 (Error)
  2026-01-01T12:00:13Z  event Warning BackOff (x2 since 2026-01-01T12:00:02Z): Back-off restarting failed container crash in pod crash-lab
                        log of attempt 2 | crash attempt 2

Back-off:
  Next start allowed at 2026-01-01T12:00:33Z (in 3s): the back-off waits 20s from the finish at 2026-01-01T12:00:13Z.
  If it crashes again as quickly, the wait after that is 40s.
  The back-off resets after 10m0s of clean running (2 x cap 5m0s): an attempt that runs until 2026-01-01T12:10:12Z or later makes the next restart immediate.

Next steps:
  1. minikubelet logs crash-lab -n demo -c crash --db DB
     the whole output of attempt 2, the one that exited 1
  2. minikubelet describe pod crash-lab -n demo --db DB
     state, last state, probes and every attempt, as kubectl describe shows them
  3. minikubelet sql "SELECT attempt, strftime('%Y-%m-%dT%H:%M:%fZ', started_at / 1000.0, 'unixepoch') AS started_at, strftime('%Y-%m-%dT%H:%M:%fZ', finished_at / 1000.0, 'unixepoch') AS finished_at, exit_code, reason, signal FROM attempts WHERE pod_uid = 'uid-crash-1' AND container = 'crash' ORDER BY attempt" --db DB
     the attempts this report used
  4. minikubelet sql "SELECT type, reason, count, strftime('%Y-%m-%dT%H:%M:%fZ', first_at / 1000.0, 'unixepoch') AS first_at, strftime('%Y-%m-%dT%H:%M:%fZ', last_at / 1000.0, 'unixepoch') AS last_at, message FROM events WHERE pod_uid = 'uid-crash-1' AND container IN ('crash', '') ORDER BY last_at, id" --db DB
     the events this report used (the container's and the pod's)
  5. minikubelet sql "SELECT delay_ms, strftime('%Y-%m-%dT%H:%M:%fZ', updated_at / 1000.0, 'unixepoch') AS updated_at FROM backoff WHERE key = 'uid-crash-1/crash'" --db DB
     the restart back-off as the agent last recorded it
  6. Change: Read the previous attempt's last lines: the program says why (a missing environment variable, a bad config, a dependency it could not reach). Probe settings will not change this.
`;

test("triage prints the fixed report shape: verdict, evidence with times, back-off, next steps", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  h.agent.close();
  const { out, code } = await h.triage("crash-lab", { backoffMax: 300 });
  expect(code).toBe(0);
  expect(out.replaceAll(h.dbPath, "DB")).toBe(EXPECTED);
});

test("every suggested SQL query runs through minikubelet sql and shows the rows the report used", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  h.agent.close();
  const report = await h.report("crash-lab");
  const queries = report.nextSteps.filter((s: { command?: string }) => s.command?.startsWith("minikubelet sql ")).map((s: { command: string }) => JSON.parse(s.command.slice("minikubelet sql ".length, s.command.lastIndexOf(" --db"))));
  expect(queries).toHaveLength(3);
  expect(await runCLI(["sql", queries[0], "--db", h.dbPath, "-o", "json"])).toBe(0);
  expect(JSON.parse(stdout).map((row: { exit_code: number }) => row.exit_code)).toEqual([1, 1, 1]);
  stdout = "";
  expect(await runCLI(["sql", queries[2], "--db", h.dbPath, "-o", "json"])).toBe(0);
  expect(JSON.parse(stdout)).toEqual([{ delay_ms: 20000, updated_at: "2026-01-01T12:00:12.000Z" }]);
});

test("-o markdown is a runbook page with the same sections", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  h.agent.close();
  const { out } = await h.triage("crash-lab", { output: "markdown" });
  expect(out.split("\n").filter((line) => line.startsWith("#"))).toEqual(["# Triage: demo/crash-lab, container crash", "## Verdict", "## Evidence", "## Back-off", "## Next steps"]);
  expect(out).toContain("| 2026-01-01T12:00:13Z | state | state.terminated (attempt 2): exit code 1 (Error), ran 1s |");
  expect(out).toContain("|  | log | log of attempt 2 \\| crash attempt 2 |");
  expect(out).toContain("   ```sh\n   minikubelet logs crash-lab -n demo -c crash --db");
});

test("a pod or container not found, or an unknown format: one clear error and exit 1 (2 for usage)", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  h.agent.close();
  expect(await runCLI(["triage", "nope", "--db", h.dbPath])).toBe(1);
  expect(stderr).toBe(`Error from server (NotFound): pods "nope" not found\nno pod named nope in any namespace of ${h.dbPath}\n`);
  stderr = "";
  expect(await runCLI(["triage", "crash-lab", "-c", "web", "--db", h.dbPath])).toBe(1);
  expect(stderr).toBe("error: container web is not valid for pod crash-lab (containers: crash)\n");
  stderr = "";
  expect(await runCLI(["triage", "crash-lab", "-o", "yaml", "--db", h.dbPath])).toBe(2);
  expect(stderr).toBe('error: -o must be one of text, json, markdown (got "yaml")\n');
  expect(stdout).toBe("");
});

test("a pod whose manifest the agent refused never ran: triage says so and points at describe", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  new SqliteStore({ db: h.agent.db, clock: h.clock }).saveRefusedManifests(
    [{ file: "/manifests/web.yaml", uid: "uid-refused", namespace: "demo", name: "web-lab", reason: "Invalid", issues: [{ path: ["spec", "containers", 0, "image"], message: "required" }] }],
    [],
    refusedPodObject,
  );
  h.agent.close();
  expect(await runCLI(["triage", "web-lab", "--db", h.dbPath])).toBe(1);
  expect(stderr).toBe("error: pod web-lab never ran: its manifest /manifests/web.yaml is refused (Invalid); minikubelet describe pod web-lab -n demo lists its problems\n");
});

test("an attempt without a log file (docker's) is read from the engine by its runtime id; with no engine the report says so", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
  await h.advance(5);
  h.agent.close();
  const asked: string[] = [];
  let out = "";
  await triageCommand("crash-lab", { db: h.dbPath, output: "json" }, {
    clock: h.clock,
    stdout: (t) => (out += t),
    stderr: () => {},
    readEngineLogs: async (attempt) => (asked.push(attempt.runtimeId), "starting\nmissing DATABASE_URL\n"),
  });
  expect(asked).toEqual(["crash-1-3"]);
  expect(JSON.parse(out).evidence.filter((e: { source: string }) => e.source === "log").map((e: { text: string }) => e.text)).toEqual(["log of attempt 1 | starting", "log of attempt 1 | missing DATABASE_URL"]);
  out = "";
  await triageCommand("crash-lab", { db: h.dbPath, output: "json" }, { clock: h.clock, stdout: (t) => (out += t), stderr: () => {} });
  expect(JSON.parse(out).evidence.filter((e: { source: string }) => e.source === "log")).toEqual([{ source: "log", text: "log of attempt 1: no log file is recorded for it" }]);
});
