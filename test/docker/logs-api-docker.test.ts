/**
 * pods/log on a docker-runtime database: attempts carry no log file, so the route reads the engine
 * by runtime id (through the agent's DockerRuntime under `run`, a connection of its own under
 * `serve`), with the engine's own timestamps, tail and since, and follow ending with the container.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { openAgentDatabase, type AgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { getLog, logsApi } from "../logs-api-fixtures.ts";
import { desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { bbContainer, describeDocker, docker, PAUSE } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");
const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z /;

let dir: string;
let agent: AgentDatabase;
let runtime: DockerRuntime;
let h: ReturnType<typeof realHarness>;
let spec: PodSpec;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mk-logs-api-docker-"));
  agent = openAgentDatabase(join(dir, "state.db"));
  runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot: join(dir, "volumes") });
  const store = new SqliteStore({ db: agent.db, clock: realClock });
  h = realHarness(runtime, { store, baseSeconds: 0.4, capSeconds: 1.6 });
});

afterEach(async () => {
  await h.close();
  agent.close();
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  rmSync(dir, { recursive: true, force: true });
});

/** A pod of one busybox container `app`, with an emptyDir at /state that outlives its attempts. */
function podOf(name: string, script: string, restartPolicy: PodSpec["restartPolicy"]): PodSpec {
  const app = bbContainer("app", script, { volumeMounts: [{ name: "state", mountPath: "/state", readOnly: false }] });
  spec = pod({ name: `${name}-${RUN}`, namespace: "mk-test", node: "", grace: 1, restartPolicy, containers: [app] });
  spec.uid = `${RUN}-${name}`;
  spec.volumes = [{ name: "state", type: "emptyDir" }];
  return spec;
}

const logPath = (name: string, query = "") => `/api/v1/namespaces/mk-test/pods/${name}/log${query}`;

describeDocker("pods/log from a docker-runtime database", () => {
  test("current and previous attempts, tailLines, timestamps, limitBytes and since, from the engine (serve: no runtime given)", async () => {
    const counter = 'n=$(cat /state/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /state/n';
    // The first run crashes, the second keeps running: the attempts stay put while the test reads.
    const p = podOf("crash", `${counter}; echo start; echo "run $n"; [ $n -gt 1 ] && exec sleep 3600; exit 1`, "Always");
    await h.kubelet.sync(desired(p));
    await h.count((e) => e.reason === "Started", 2, 20_000);
    await h.kubelet.idle();
    using api = logsApi(join(dir, "state.db"), realClock);
    const read = async (query: string) => {
      const response = await getLog(api, logPath(p.name, query));
      expect(response.status).toBe(200);
      return response.text();
    };
    // Started is the process's start, not its output: on a loaded machine the second run may not
    // have written its lines yet when the loop is idle.
    for (const deadline = Date.now() + 10_000; !(await read("")).includes("run ") && Date.now() < deadline; ) await Bun.sleep(50);
    const previous = await read("?previous=true");
    const current = await read("?tailLines=1");
    const runOf = (text: string) => Number(/run (\d+)\n$/.exec(text)?.[1]);
    expect(previous).toMatch(/^start\nrun \d+\n$/);
    expect(current).toMatch(/^run \d+\n$/);
    expect([runOf(previous), runOf(current)]).toEqual([1, 2]);
    const stamped = (await read("?timestamps=true")).split("\n").filter(Boolean);
    expect(stamped).toHaveLength(2);
    for (const line of stamped) expect(line).toMatch(STAMP);
    expect(await read("?limitBytes=3")).toBe("sta");
    expect(await read("?sinceSeconds=3600")).toMatch(/^start\n/);
    expect(await read(`?sinceTime=${new Date(Date.now() + 3600_000).toISOString()}`)).toBe("");
  });

  test("follow through the agent's runtime streams while the container runs and ends when it exits", async () => {
    const p = podOf("follow", 'for i in 1 2 3 4; do echo "line $i"; sleep 0.3; done', "Never");
    await h.kubelet.sync(desired(p));
    await h.event((e) => e.reason === "Started");
    await h.kubelet.idle();
    using api = logsApi(join(dir, "state.db"), realClock, runtime);
    const response = await getLog(api, logPath(p.name, "?follow=true"));
    const chunks: string[] = [];
    for await (const chunk of response.body!) chunks.push(new TextDecoder().decode(chunk));
    expect(chunks.join("")).toBe("line 1\nline 2\nline 3\nline 4\n");
    expect(chunks.length).toBeGreaterThan(1);
  });

  test("a client leaving ends a follow of a container that never ends", async () => {
    const p = podOf("ticker", 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.1; done', "Always");
    await h.kubelet.sync(desired(p));
    await h.event((e) => e.reason === "Started");
    await h.kubelet.idle();
    using api = logsApi(join(dir, "state.db"), realClock);
    const leaving = new AbortController();
    const response = await getLog(api, logPath(p.name, "?follow=true"), leaving.signal);
    let out = "";
    for await (const chunk of response.body!) {
      out += new TextDecoder().decode(chunk);
      if (out.includes("tick 3\n")) leaving.abort();
    }
    expect(out).toStartWith("tick 1\ntick 2\ntick 3\n");
  });
});
