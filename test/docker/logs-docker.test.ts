/**
 * `logs` on a docker-runtime database: attempts carry no log file, so their output comes from the
 * engine by runtime id. A crash-looping pod runs on the real loop with the SQLite store, and
 * `logs` (the command module and the CLI in a subprocess) reads the current and previous attempts.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dockerLogFollower, dockerLogReader } from "../../src/cli/logs/docker-log-reader.ts";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import { realClock } from "../../src/clock.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { openAgentDatabase, type AgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { bbContainer, describeDocker, docker, PAUSE } from "./helpers.ts";

const ROOT = resolve(import.meta.dir, "../..");
const RUN = randomBytes(3).toString("hex");

let dir: string;
let agent: AgentDatabase;
let h: ReturnType<typeof realHarness>;
let spec: PodSpec;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mk-logs-docker-"));
  agent = openAgentDatabase(join(dir, "state.db"));
  const runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot: join(dir, "volumes") });
  const store = new SqliteStore({ db: agent.db, clock: realClock });
  h = realHarness(runtime, { store, baseSeconds: 1.5, capSeconds: 3 });
});

afterEach(async () => {
  await h.close();
  agent.close();
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs a pod whose every attempt prints `run N` and exits 1, until its third attempt has exited,
 * and stops the loop in the pass that met that exit (its BackOff event): that pass shows the third
 * as the current attempt and the second as the previous, where any later pass in the wait (an
 * engine event a loaded machine delivers late) shows CrashLoopBackOff, the third then the previous.
 * The 3 s wait leaves that pass time to meet the exit inside it however loaded the machine.
 */
async function crashThrice(): Promise<string> {
  const counter = 'n=$(cat /state/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /state/n; echo "run $n"; exit 1';
  spec = pod({
    name: `logs-${RUN}`,
    namespace: "mk-test",
    node: "",
    grace: 1,
    containers: [bbContainer("crash", counter, { volumeMounts: [{ name: "state", mountPath: "/state", readOnly: false }] })],
  });
  spec.uid = `${RUN}-logs`;
  spec.volumes = [{ name: "state", type: "emptyDir" }];
  let started = 0;
  h.kubelet.recorder.subscribe((e) => {
    if (e.reason === "Started") started++;
    if (e.reason === "BackOff" && started === 3) h.kubelet.stop();
  });
  await h.kubelet.sync(desired(spec));
  const starts = await h.count((e) => e.reason === "Started", 3, 10_000);
  await h.event((e) => e.reason === "BackOff" && e.at >= starts[2]!.at);
  await h.kubelet.idle();
  return join(dir, "state.db");
}

describeDocker("logs from a docker-runtime database", () => {
  test("logsCommand reads the current and --previous attempts from the engine", async () => {
    const db = await crashThrice();
    const read = async (options: { previous?: boolean; tail?: string }) => {
      let out = "";
      await logsCommand(spec.name, { db, namespace: "mk-test", ...options }, { stdout: (t) => (out += t), readLogs: dockerLogReader() });
      return out;
    };
    // While its exit is shown (the back-off running), the last crash is the current output and the
    // one before it the previous, as the kubelet answers `kubectl logs` and `kubectl logs --previous`.
    expect(await read({})).toBe("run 3\n");
    expect(await read({ previous: true })).toBe("run 2\n");
    expect(await read({ previous: true, tail: "0" })).toBe("");
  });

  test("the CLI's logs --previous reads docker attempts (the reader is wired in cli.ts)", async () => {
    const db = await crashThrice();
    const result = spawnSync(
      join(ROOT, "node_modules/.bin/bun"),
      [join(ROOT, "src/main.ts"), "logs", spec.name, "-n", "mk-test", "--previous", "--db", db],
      { encoding: "utf8", env: { ...process.env, TZ: "UTC", NO_COLOR: "1" }, timeout: 10_000 },
    );
    // The third exit is the current attempt while its back-off runs: the previous is the second.
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: "run 2\n", stderr: "" });
  });

  test("a removed container gives one line naming the container and the attempt", async () => {
    const db = await crashThrice();
    const ids = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`, `${LABEL.sandbox}=false`] } });
    await Promise.all(ids.map((c) => docker.getContainer(c.Id).remove({ force: true })));
    await expect(
      logsCommand(spec.name, { db, namespace: "mk-test", previous: true }, { stdout: () => {}, readLogs: dockerLogReader() }),
    ).rejects.toThrow(/^logs of container "crash" attempt 1: docker container [0-9a-f]{12}: .*no such container \(removed\)$/);
  });

  test("logs -f streams a running docker container's output until interrupted", async () => {
    spec = pod({
      name: `follow-${RUN}`,
      namespace: "mk-test",
      node: "",
      grace: 1,
      containers: [bbContainer("ticker", 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.1; done')],
    });
    spec.uid = `${RUN}-follow`;
    await h.kubelet.sync(desired(spec));
    await h.event((e) => e.reason === "Started");
    await h.kubelet.idle();
    const db = join(dir, "state.db");
    const interrupt = new AbortController();
    let out = "";
    const done = logsCommand(
      spec.name,
      { db, namespace: "mk-test", follow: true },
      {
        stdout: (t) => {
          out += t;
          if (out.includes("tick 8\n")) interrupt.abort();
        },
        readLogs: dockerLogReader(),
        followLogs: dockerLogFollower(),
        signal: interrupt.signal,
      },
    );
    expect(await done).toBe(0);
    const ticks = out.split("\n").filter(Boolean);
    expect(ticks.slice(0, 8)).toEqual(Array.from({ length: 8 }, (_, i) => `tick ${i + 1}`));
  });

  test("logs -f ends by itself when the container exits, with every line it wrote", async () => {
    spec = pod({
      name: `follow-end-${RUN}`,
      namespace: "mk-test",
      node: "",
      grace: 1,
      restartPolicy: "Never",
      containers: [bbContainer("counter", 'for i in 1 2 3 4 5; do echo "line $i"; sleep 0.2; done')],
    });
    spec.uid = `${RUN}-follow-end`;
    await h.kubelet.sync(desired(spec));
    await h.kubelet.idle();
    let out = "";
    const code = await logsCommand(
      spec.name,
      { db: join(dir, "state.db"), namespace: "mk-test", follow: true },
      { stdout: (t) => (out += t), readLogs: dockerLogReader(), followLogs: dockerLogFollower(), signal: new AbortController().signal },
    );
    expect(code).toBe(0);
    expect(out).toBe("line 1\nline 2\nline 3\nline 4\nline 5\n");
    expect((await h.event((e) => e.reason === "Exited")).message).toBe("Container counter exited with code 0 (Completed)");
  });
});
