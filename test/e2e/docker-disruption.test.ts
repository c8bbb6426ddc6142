/**
 * Issue 7, last bullet, compiled binary on real dockerd: the engine acting behind the agent's back.
 * (a) `docker restart` of the running app container: the agent neither crashes nor duplicates nor
 *     loses it; the pod is 1/1 Running again and `events` say what happened (the decision is in
 *     src/kubelet/runtime-restarts.ts); a real crash afterwards is handled as always.
 * (b) dockerd stopped (SIGTERM) and started again under a running agent: errors are reported while
 *     it is gone, and after it the pod runs again in a new sandbox, with nothing duplicated. Only
 *     the dockerd that `./scripts/docker-env up` started is touched (its pid file), through the same
 *     script, so `down` still stops it; the local registry is a separate process and keeps answering.
 * Each test runs its pod in a namespace of its own, so parallel runs never meet.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BUSYBOX, REGISTRY, describeDocker, docker } from "../docker/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { Agent, ROOT, attemptRows, busyboxWebManifest, containerRows, ensureBinary, eventRows, podTable, waitFor, Workspace } from "./helpers.ts";
import { testNeeding } from "../requirements.ts";

const BACKOFF = ["--backoff-base", "1", "--backoff-max", "4"];
const STATE = process.env.MINIKUBELET_DOCKER_ENV_STATE ?? "/tmp/minikubelet-docker-env";
const DOCKERD_PID = join(STATE, "dockerd.pid");

/** A web server that exits on SIGTERM (so a stopping dockerd does not wait 10s for it), ready via HTTP. */
function webPod(ns: string): string {
  return busyboxWebManifest(ns, BUSYBOX, "trap 'exit 0' TERM; mkdir -p /www && echo hello > /www/index.html; httpd -f -p 8080 -h /www & wait");
}

/** Why the dockerd restart cannot be tested here, or undefined when docker-env up started dockerd. */
function dockerdNotOurs(): string | undefined {
  if (!existsSync(DOCKERD_PID)) return `${DOCKERD_PID} is missing: dockerd was not started by ./scripts/docker-env up, so the test will not stop it`;
  const pid = readFileSync(DOCKERD_PID, "utf8").trim();
  let comm = "";
  try {
    comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    comm = "(no such process)";
  }
  if (comm !== "dockerd") return `${DOCKERD_PID} names pid ${pid}, which is ${comm}, not dockerd`;
  return undefined;
}

function dockerEnv(command: string): void {
  const result = spawnSync(join(ROOT, "scripts/docker-env"), [command], { cwd: ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`./scripts/docker-env ${command} exited ${result.status}: ${result.stdout}${result.stderr}`);
}

function dockerCli(...args: string[]): string {
  const result = spawnSync("docker", args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`docker ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

/** Containers of a namespace (sandboxes too), from the engine. */
async function namespaceContainers(ns: string, all = false) {
  const found = await docker.listContainers({ all, filters: { label: [`${LABEL.managedBy}=true`, `${LABEL.podNamespace}=${ns}`] } });
  return found.map((c) => ({ id: c.Id, state: c.State, sandbox: c.Labels[LABEL.sandbox] === "true", name: c.Labels[LABEL.containerName] ?? "" }));
}

async function removeNamespace(ns: string): Promise<void> {
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${ns}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
}

/** The web row once it is ready, running one web container and one sandbox, nothing else running. */
async function settledWeb(ws: Workspace, ns: string) {
  const web = containerRows(ws).find((row) => row.name === "web");
  if (!web?.ready || web.state !== "running") return false;
  const running = await namespaceContainers(ns);
  const apps = running.filter((c) => !c.sandbox);
  if (apps.length !== 1 || apps[0]!.id !== web.container_id || running.filter((c) => c.sandbox).length !== 1) return false;
  return { web, sandbox: running.find((c) => c.sandbox)!.id };
}

describeDocker("the engine acting behind the agent's back (compiled binary)", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  let stoppedDockerd = false;

  beforeAll(() => {
    ensureBinary();
  });

  afterAll(async () => {
    // Whatever happened, the engine is left as docker-env up leaves it: running, its pid recorded.
    // The agents are stopped even when that fails: a leaked agent holds node n1's lock, and every
    // later docker test on n1 would fail behind it.
    let failure: unknown;
    try {
      if (stoppedDockerd && spawnSync("docker", ["info"]).status !== 0) dockerEnv("start-dockerd");
    } catch (error) {
      failure = error;
    }
    for (const cleanup of cleanups.reverse()) await Promise.resolve().then(cleanup).catch((error) => (failure ??= error));
    if (failure) throw failure;
  });

  function start(ns: string): { ws: Workspace; agent: Agent } {
    const ws = new Workspace();
    ws.write("web.yaml", webPod(ns));
    const agent = new Agent(ws, ["--runtime", "docker", ...BACKOFF]);
    cleanups.push(async () => {
      await agent.terminate();
      await removeNamespace(ns);
      ws.cleanup();
    });
    return { ws, agent };
  }

  test("docker restart of the app container: one copy, not lost, 1/1 Running again, events tell; a later crash is a crash", async () => {
    const ns = `e2e-${randomBytes(3).toString("hex")}`;
    const { ws, agent } = start(ns);
    const detail = () => JSON.stringify(containerRows(ws)) + agent.stdout + agent.stderr;
    const before = await waitFor("web ready", () => settledWeb(ws, ns), 15_000, detail);
    // Past the loop's slack for start times, so an in-place restart is told from the first start.
    const startedAt = ws.query<{ started_at: number }>("SELECT started_at FROM attempts WHERE container = 'web' ORDER BY attempt DESC LIMIT 1")[0]!.started_at;
    await waitFor("web running for 2.5s", () => Date.now() - startedAt > 2500, 5000);

    dockerCli("restart", "-t", "0", before.web.container_id);
    const after = await waitFor(
      "web 1/1 Running again with one copy",
      async () => {
        const settled = await settledWeb(ws, ns);
        const reasons = eventRows(ws).filter((e) => e.pod === "web-n1").map((e) => e.reason);
        const told = reasons.includes("Restarted") || reasons.includes("Exited");
        // A seen exit is followed by the loop's own restart; wait for that pass's checkpoint too.
        const counted = !reasons.includes("Exited") || (settled && settled.web.restart_count >= 1);
        return settled && told && counted && podTable(ws, ns)["web-n1"]?.[1] === "Running" ? settled : false;
      },
      15_000,
      detail,
    );
    expect(agent.done).toBe(false);
    expect(after.sandbox).toBe(before.sandbox);
    const reasons = eventRows(ws).filter((e) => e.pod === "web-n1").map((e) => e.reason);
    if (reasons.includes("Exited")) {
      // The loop saw the exit: counted, restarted by the loop, the revived old attempt killed. A
      // new attempt that raced the revived one for port 8080 may have failed and been restarted
      // once more: the count is then 2, and it always matches the attempts the loop made.
      expect(after.web.restart_count).toBeGreaterThanOrEqual(1);
      expect(after.web.container_id).not.toBe(before.web.container_id);
      // Killed, and removed once a later dead attempt took its place as the one kept for --previous.
      const revived = await docker.getContainer(before.web.container_id).inspect().catch(() => undefined);
      expect(revived?.State.Running ?? false).toBe(false);
      console.log("[docker restart] the loop saw the exit: a new attempt runs, the revived one was killed");
    } else {
      // The loop only saw it running again: the same container, not counted.
      expect(after.web.restart_count).toBe(0);
      expect(after.web.container_id).toBe(before.web.container_id);
      expect(reasons).toContain("Restarted");
      console.log("[docker restart] the loop saw it running again: same container, Restarted event");
    }
    expect(attemptRows(ws, "web").length).toBe(after.web.restart_count + 1);
    expect(podTable(ws, ns)["web-n1"]).toEqual(["1/1", "Running", String(after.web.restart_count)]);
    expect(ws.cli("events", "--for", "pod/web-n1", "-n", ns)).toMatch(/Restarted|Exited/);

    // A real crash afterwards: counted and restarted by the loop, still one copy.
    dockerCli("kill", "-s", "KILL", after.web.container_id);
    const crashed = await waitFor(
      "web restarted after a crash",
      async () => {
        const settled = await settledWeb(ws, ns);
        return settled && settled.web.restart_count === after.web.restart_count + 1 ? settled : false;
      },
      15_000,
      detail,
    );
    expect(crashed.web.container_id).not.toBe(after.web.container_id);
    expect(eventRows(ws).some((e) => e.reason === "Exited" && e.message === "Container web exited with code 137 (Error)")).toBe(true);
    expect(agent.done).toBe(false);
    // One agent per --node on an engine: the next test's agent takes n1.
    await agent.terminate();
  }, 40_000);

  testNeeding("dockerd stopped and started under a running agent: errors while gone, the pod runs again after, nothing duplicated", dockerdNotOurs(), async () => {
    const ns = `e2e-${randomBytes(3).toString("hex")}`;
    const { ws, agent } = start(ns);
    const detail = () => JSON.stringify(containerRows(ws)) + agent.stdout + agent.stderr;
    const before = await waitFor("web ready", () => settledWeb(ws, ns), 15_000, detail);
    const oldPid = readFileSync(DOCKERD_PID, "utf8").trim();

    stoppedDockerd = true;
    dockerEnv("stop-dockerd");
    await waitFor(
      "the agent to report the engine gone",
      () =>
        agent.stderr.includes("runtime docker unhealthy") &&
        eventRows(ws).some((e) => e.pod === "web-n1" && e.reason === "FailedSync" && e.message.includes("docker engine at ")),
      10_000,
      detail,
    );
    expect(agent.done).toBe(false);
    expect(ws.cli("events", "--types", "Warning")).toContain("FailedSync");

    dockerEnv("start-dockerd");
    stoppedDockerd = false;
    const newPid = readFileSync(DOCKERD_PID, "utf8").trim();
    expect(newPid).not.toBe(oldPid);
    expect(readFileSync(`/proc/${newPid}/comm`, "utf8").trim()).toBe("dockerd");

    const after = await waitFor("web 1/1 Running again in a new sandbox", () => settledWeb(ws, ns), 20_000, detail);
    expect(agent.done).toBe(false);
    // The pod may be back before the events stream (its own back-off, up to 5s) is: wait for both.
    await waitFor("the events stream to reconnect", () => agent.stderr.includes("runtime docker healthy"), 10_000, detail);
    expect(after.sandbox).not.toBe(before.sandbox);
    expect(after.web.container_id).not.toBe(before.web.container_id);
    expect(podTable(ws, ns)["web-n1"]).toEqual(["1/1", "Running", String(after.web.restart_count)]);
    expect(eventRows(ws).some((e) => e.pod === "web-n1" && e.reason === "SandboxChanged")).toBe(true);
    // Nothing duplicated: one sandbox (the dead one removed), the running web and its one kept predecessor.
    const all = await namespaceContainers(ns, true);
    expect(all.filter((c) => c.sandbox).map((c) => c.id)).toEqual([after.sandbox]);
    expect(all.filter((c) => !c.sandbox).map((c) => c.id).sort()).toEqual([after.web.container_id, before.web.container_id].sort());
    // The registry is its own process, not a container: the engine's restart leaves it answering.
    expect((await fetch(`http://${REGISTRY}/v2/`, { signal: AbortSignal.timeout(3000) })).ok).toBe(true);
  }, 40_000);
});
