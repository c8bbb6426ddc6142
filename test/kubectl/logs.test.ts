/**
 * Real kubectl reads pods/log on both runtimes: `logs POD`, `-c`, `--previous`, `--tail`,
 * `--timestamps`, `--since`, `--limit-bytes` and `-f` (which ends when the container does), through
 * the PATH dispatcher and the oldest and newest versioned binaries. The process runtime's database
 * is served as `serve` serves it (no runtime: its files are read from the runtime root); the docker
 * one as `run` does (the agent's runtime reads the engine).
 */
import { containerLogPath } from "../../src/runtime/container-log-file.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import type { ContainerSpec, PodSpec } from "../../src/manifest/types.ts";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { ProcessLayout } from "../../src/runtime/process/process-files.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import type { Runtime } from "../../src/runtime/runtime.ts";
import { openAgentDatabase, type AgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { bbContainer, describeDocker, docker, PAUSE } from "../docker/helpers.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession, serveDatabase, type ServedApi } from "./harness.ts";

const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z /;

interface RuntimeSetup {
  name: "process" | "docker";
  make(dir: string): { runtime: Runtime; logPathOf?: (uid: string, id: string) => string; serveWith?: Runtime };
  container(name: string, script: string): ContainerSpec;
}

const processSetup: RuntimeSetup = {
  name: "process",
  make: (dir) => {
    const root = join(dir, "process");
    const layout = new ProcessLayout(root);
    return { runtime: new ProcessRuntime({ rootDir: root }), logPathOf: (uid, id) => containerLogPath(layout.containerDir(uid, id)) };
  },
  container: (name, script) => container(name, { command: ["sh", "-c", script] }),
};

const dockerSetup: RuntimeSetup = {
  name: "docker",
  make: (dir) => {
    const runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot: join(dir, "volumes") });
    return { runtime, serveWith: runtime };
  },
  container: (name, script) => bbContainer(name, script, { volumeMounts: [{ name: "state", mountPath: "/state", readOnly: false }] }),
};

function kubectlLogs(setup: RuntimeSetup): void {
  let dir: string;
  let agent: AgentDatabase;
  let h: ReturnType<typeof realHarness>;
  let api: ServedApi;
  let session: KubectlSession;
  const pods: PodSpec[] = [];
  const tag = Math.random().toString(16).slice(2, 8);

  const podOf = (name: string, containers: ContainerSpec[], restartPolicy: PodSpec["restartPolicy"] = "Always"): PodSpec => {
    const spec = pod({ name, namespace: "default", node: "", grace: 1, restartPolicy, containers });
    spec.uid = `${tag}-${name}`;
    spec.volumes = [{ name: "state", type: "emptyDir" }];
    pods.push(spec);
    return spec;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `mk-kubectl-logs-${setup.name}-`));
    agent = openAgentDatabase(join(dir, "state.db"));
    const { runtime, logPathOf, serveWith } = setup.make(dir);
    const store = new SqliteStore({ db: agent.db, clock: realClock, logPathOf });
    h = realHarness(runtime, { store, baseSeconds: 0.4, capSeconds: 1.6 });
    // Its first run crashes, its second keeps running: `--previous` and the current attempt stay put.
    const counter = setup.name === "process" ? join(dir, "crash-runs") : "/state/n";
    const crash = setup.container("app", `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; echo "hello from run $n"; echo "bye from run $n"; [ $n -gt 1 ] && exec sleep 3600; exit 1`);
    const side = setup.container("side", 'echo "side car"; exec sleep 3600');
    const crashPod = podOf("crash", [crash, side]);
    crashPod.labels = { app: "crash" };
    await h.kubelet.sync(desired(crashPod));
    await h.count((e) => e.reason === "Started" && e.container === "app", 2, 30_000);
    api = serveDatabase(join(dir, "state.db"), { runtime: serveWith });
    session = new KubectlSession(join(dir, "state.db"));
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await h?.close();
    agent?.close();
    session?.[Symbol.dispose]();
    if (setup.name === "docker") {
      for (const spec of pods) {
        const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
        await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [label, binary] of KUBECTLS_UNDER_TEST) {
    describeWithKubectl(`kubectl logs (${label}) on the ${setup.name} runtime`, binary, (kubectl) => {
      const logs = async (...args: string[]) => {
        const result = await session.run(kubectl, ["logs", ...args]);
        expect({ args, status: result.status, stderr: result.stderr }).toEqual({ args, status: 0, stderr: "" });
        return result.stdout;
      };

      test("POD, -c, --previous, --tail, --timestamps, --since, --limit-bytes", async () => {
        expect(await logs("crash", "-c", "app")).toBe("hello from run 2\nbye from run 2\n");
        expect(await logs("crash", "-c", "side")).toBe("side car\n");
        expect(await logs("crash", "-c", "app", "--previous")).toBe("hello from run 1\nbye from run 1\n");
        expect(await logs("crash", "-c", "app", "--tail", "1")).toBe("bye from run 2\n");
        const stamped = (await logs("crash", "-c", "app", "--timestamps")).split("\n");
        expect(stamped.pop()).toBe("");
        expect(stamped.map((line) => line.replace(STAMP, "<time> "))).toEqual(["<time> hello from run 2", "<time> bye from run 2"]);
        expect(await logs("crash", "-c", "app", "--since=1h")).toBe("hello from run 2\nbye from run 2\n");
        expect(await logs("crash", "-c", "app", "--limit-bytes=5")).toBe("hello");
        // Without -c kubectl picks the first container itself (and says so on stderr).
        const plain = await session.run(kubectl, ["logs", "crash"]);
        expect(plain.stdout).toBe("hello from run 2\nbye from run 2\n");
        // A selector lists the pods, then reads each container (concurrently: in either order).
        const selected = (await logs("-l", "app=crash", "--all-containers")).split("\n");
        expect(selected.sort()).toEqual(["", "bye from run 2", "hello from run 2", "side car"]);
        const missing = await session.run(kubectl, ["logs", "nope"]);
        expect(missing.status).toBe(1);
        expect(missing.stderr).toContain('pods "nope" not found');
        const noPrevious = await session.run(kubectl, ["logs", "crash", "-c", "side", "--previous"]);
        expect(noPrevious).toMatchObject({ status: 1, stderr: 'Error from server (BadRequest): previous terminated container "side" in pod "crash" not found\n' });
      }, 60_000);

      test("-f streams and ends by itself when the container ends", async () => {
        const name = `ticker-${label.replace(/\W/g, "-")}`;
        const spec = podOf(name, [setup.container("tick", 'echo "tick 1"; sleep 1; echo "tick 2"; sleep 1; echo "tick 3"')], "Never");
        await h.kubelet.sync(desired(...pods.filter((p) => p.name === "crash" || p.name.startsWith("ticker"))));
        await h.event((e) => e.reason === "Started" && e.podKey === spec.key, 30_000);
        // Watch kubectl's output as it comes: the first line must be printed while the container runs.
        const child = spawn(kubectl, ["--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "logs", "-f", name], { env: { PATH: process.env.PATH ?? "", HOME: session.dir } });
        let stdout = "";
        let exitedWhenFirstPrinted: boolean | undefined;
        child.stdout.on("data", (chunk) => {
          exitedWhenFirstPrinted ??= h.events.some((e) => e.reason === "Exited" && e.podKey === spec.key);
          stdout += String(chunk);
        });
        const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
        const status = await new Promise((done) => child.once("close", done));
        clearTimeout(timer);
        expect({ status, stdout }).toEqual({ status: 0, stdout: "tick 1\ntick 2\ntick 3\n" });
        expect(exitedWhenFirstPrinted).toBe(false);
        // It read the last line, written just before the exit: it ended with the container, not before.
        expect((await h.event((e) => e.reason === "Exited" && e.podKey === spec.key, 10_000)).message).toBe("Container tick exited with code 0 (Completed)");
      }, 60_000);
    });
  }
}

describe("kubectl logs on the process runtime", () => kubectlLogs(processSetup));
describeDocker("kubectl logs on the docker runtime", () => kubectlLogs(dockerSetup));
