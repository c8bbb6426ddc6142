/**
 * Issue 25: the process runtime's log has a time per line (the monitor's CRI records), so kubectl's
 * `--since` and `--timestamps` are exact: a container writes early lines, waits, writes late ones,
 * on stdout and stderr; `logs --since=2s` returns only the late ones, `--timestamps` stamps each
 * line with its own time, and the API's `stream` reads one stream alone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { containerLogPath } from "../../src/runtime/container-log-file.ts";
import { ProcessLayout } from "../../src/runtime/process/process-files.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { openAgentDatabase, type AgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession, serveDatabase, type ServedApi } from "./harness.ts";

const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) /;
/** Between the early and the late lines: well past the `--since` window, whatever the load. */
const GAP_SECONDS = 4;

let dir: string;
let agent: AgentDatabase;
let h: ReturnType<typeof realHarness>;
let api: ServedApi;
let session: KubectlSession;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mk-kubectl-logtimes-"));
  agent = openAgentDatabase(join(dir, "state.db"));
  const root = join(dir, "process");
  const layout = new ProcessLayout(root);
  const store = new SqliteStore({ db: agent.db, clock: realClock, logPathOf: (uid, id) => containerLogPath(layout.containerDir(uid, id)) });
  h = realHarness(new ProcessRuntime({ rootDir: root }), { store });
  const done = join(dir, "late-written");
  const script = `echo early out; echo early err >&2; sleep ${GAP_SECONDS}; echo late out; echo late err >&2; : > ${done}; exec sleep 3600`;
  const spec: PodSpec = pod({ name: "times", namespace: "default", node: "", grace: 1, containers: [container("app", { command: ["sh", "-c", script] })] });
  await h.kubelet.sync(desired(spec));
  while (!existsSync(done)) await Bun.sleep(50);
  api = serveDatabase(join(dir, "state.db"));
  session = new KubectlSession(join(dir, "state.db"));
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await h?.close();
  agent?.close();
  session?.[Symbol.dispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe("logs with times on the process runtime", () => {
  for (const [label, binary] of KUBECTLS_UNDER_TEST) {
    describeWithKubectl(`kubectl ${label}`, binary, (kubectl) => {
      const logs = async (...args: string[]) => {
        const result = await session.run(kubectl, ["logs", "times", ...args]);
        expect({ args, status: result.status, stderr: result.stderr }).toEqual({ args, status: 0, stderr: "" });
        return result.stdout;
      };

      test("--timestamps gives each line its own time; --since and --since-time return only the lines of their window", async () => {
        const stamped = (await logs("--timestamps")).trimEnd().split("\n");
        const timeOf = (text: string) => Date.parse(STAMP.exec(stamped.find((line) => line.endsWith(text))!)![1]!);
        expect(stamped.every((line) => STAMP.test(line))).toBe(true);
        expect(timeOf("late out") - timeOf("early out")).toBeGreaterThanOrEqual(GAP_SECONDS * 1000 - 50);
        // A window that starts a second or more after the early lines, so at least GAP - 2 s before the late ones.
        const since = Math.floor((Date.now() - timeOf("early err")) / 1000) - 1;
        expect((await logs(`--since=${since}s`)).split("\n").sort()).toEqual(["", "late err", "late out"]);
        const between = new Date(timeOf("early err") + (GAP_SECONDS * 1000) / 2).toISOString();
        expect((await logs(`--since-time=${between}`)).split("\n").sort()).toEqual(["", "late err", "late out"]);
        expect((await logs()).split("\n").sort()).toEqual(["", "early err", "early out", "late err", "late out"]);
        expect(Math.abs(timeOf("late err") - timeOf("late out"))).toBeLessThan(1000);
      }, 30_000);

      test("the API's stream reads stdout or stderr alone, each in its own order", async () => {
        const raw = async (stream: string) => {
          const result = await session.run(kubectl, ["get", "--raw", `/api/v1/namespaces/default/pods/times/log?stream=${stream}`]);
          expect(result.status).toBe(0);
          return result.stdout;
        };
        expect(await raw("Stdout")).toBe("early out\nlate out\n");
        expect(await raw("Stderr")).toBe("early err\nlate err\n");
      });
    });
  }
});
