/**
 * Issue 7 end to end, docker runtime, compiled binary: after `kill -9` of the agent the next one
 * adopts the same docker containers (same ids in `docker ps`, same process), keeps restart counts
 * and readiness, continues the crash loop's back-off, keeps the events; --stop-pods-on-exit at the
 * end removes everything. The pods live in a namespace of their own, so parallel runs never meet.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { Agent, attemptRows, busyboxWebManifest, backoffDelay, containerRows, ensureBinary, eventRows, podTable, waitFor, Workspace } from "./helpers.ts";

// Base 2 puts the third restart's wait at 8 s, which leaves a new agent on a loaded machine (a
// compiled binary starting beside other suites, an engine slow to answer) seconds to adopt before that wait ends.
const BACKOFF = ["--backoff-base", "2", "--backoff-max", "16"];
const NS = `e2e-${randomBytes(3).toString("hex")}`;

const WEB = busyboxWebManifest(NS, BUSYBOX, "mkdir -p /www && echo hello > /www/index.html && exec httpd -f -p 8080 -h /www");

const CRASH = `apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: ${NS}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: crash
      image: ${BUSYBOX}
      imagePullPolicy: Never
      command: ["sh", "-c", "echo crashing; exit 1"]
`;

/** Running containers (sandboxes too) of this test's namespace, as `docker ps` lists them. */
function dockerPs(): string[] {
  const result = spawnSync("docker", ["ps", "--no-trunc", "--filter", `label=${LABEL.managedBy}=true`, "--filter", `label=${LABEL.podNamespace}=${NS}`, "--format", "{{.ID}} {{.Names}}"], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`docker ps failed: ${result.stderr}`);
  return result.stdout.trim().split("\n").filter(Boolean).sort();
}

async function removeNamespace(): Promise<void> {
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
}

describeDocker("adoption with the docker runtime (compiled binary)", () => {
  let ws: Workspace | undefined;
  const agents: Agent[] = [];

  beforeAll(() => {
    ensureBinary();
  });

  afterAll(async () => {
    for (const agent of agents) await agent.terminate();
    await removeNamespace();
    ws?.cleanup();
  });

  test("kill -9 of the agent: same container ids, counts, readiness, back-off and events", async () => {
    const workspace = (ws = new Workspace());
    workspace.write("web.yaml", WEB);
    workspace.write("crash.yaml", CRASH);
    const first = new Agent(workspace, ["--runtime", "docker", ...BACKOFF]);
    agents.push(first);
    const containers = () => containerRows(workspace);
    const attempts = (name: string) => attemptRows(workspace, name);
    const backOffCount = () => eventRows(workspace).filter((e) => e.reason === "BackOff").reduce((sum, e) => sum + e.count, 0);

    await waitFor(
      "web ready and crash in its 8s back-off",
      () => {
        const [crash, web] = containers();
        if (!web?.ready || (crash?.state !== "terminated" && crash?.state !== "waiting") || crash.restart_count !== 3 || backoffDelay(workspace, "crash") !== 8000) return false;
        const finished = attempts("crash")[3]?.finished_at;
        return finished != null && finished + 8000 - Date.now() > 5000;
      },
      35_000,
      () => JSON.stringify(containers()) + first.stdout + first.stderr,
    );
    // The pass that met the exit shows it (Error); a later pass in the wait (an engine event, the
    // relist) shows CrashLoopBackOff, as on a kubelet node.
    const table = podTable(workspace, NS);
    expect(table["web-n1"]).toEqual(["1/1", "Running", "0"]);
    expect({ ready: table["crash-n1"]?.[0], restarts: table["crash-n1"]?.[2] }).toEqual({ ready: "0/1", restarts: "3" });
    expect(["Error", "CrashLoopBackOff"]).toContain(table["crash-n1"]?.[1] ?? "");
    const before = { ps: dockerPs(), containers: containers(), web: attempts("web"), crash: attempts("crash"), events: eventRows(workspace), backOffs: backOffCount() };
    // The web container and both sandboxes run; the crashed container is not up.
    expect(before.ps.length).toBe(3);
    expect(before.ps.some((line) => line.startsWith(before.containers[1]!.container_id))).toBe(true);
    const webState = (await docker.getContainer(before.containers[1]!.container_id).inspect()).State;

    await first.kill9();
    const second = new Agent(workspace, ["--runtime", "docker", "--stop-pods-on-exit", ...BACKOFF]);
    agents.push(second);
    await second.waitForOutput("Adopted running container web");
    // Adoption checkpoints the pods as the first agent left them; the new agent's first pass in the
    // wait draws the back-off it took over: CrashLoopBackOff, no second BackOff event for this exit.
    await waitFor("the adopted crash pod's first pass", () => podTable(workspace, NS)["crash-n1"]?.[1] === "CrashLoopBackOff", 5_000, () => second.stdout + second.stderr);
    expect(podTable(workspace, NS)).toEqual({ "crash-n1": ["0/1", "CrashLoopBackOff", "3"], "web-n1": ["1/1", "Running", "0"] });
    expect(backOffCount()).toBe(before.backOffs);
    expect(dockerPs()).toEqual(before.ps);

    const crashStarted = await waitFor(
      "the crash loop's fourth restart",
      () => {
        const web = containers()[1];
        if (!web?.ready) throw new Error(`web went not ready after adoption: ${JSON.stringify(web)}`);
        return attempts("crash")[4]?.started_at ?? undefined;
      },
      15_000,
      () => second.stdout + second.stderr,
    );
    const finished = before.crash[3]!.finished_at!;
    expect(crashStarted - (finished + 8000)).toBeGreaterThanOrEqual(-50);
    expect(crashStarted - (finished + 8000)).toBeLessThan(1500);
    expect(crashStarted - second.startedAt).toBeGreaterThan(1000);

    // The same web container and process, never restarted; the sandboxes are the same ones.
    const after = (await docker.getContainer(before.containers[1]!.container_id).inspect()).State;
    expect({ pid: after.Pid, startedAt: after.StartedAt, running: after.Running }).toEqual({ pid: webState.Pid, startedAt: webState.StartedAt, running: true });
    // The crash pod's fifth attempt may be up for an instant right now; it is not what is compared.
    expect(dockerPs().filter((line) => !line.includes(" k8s_crash_"))).toEqual(before.ps);
    expect(attempts("web")).toEqual(before.web);
    expect(attempts("crash").slice(0, 4)).toEqual(before.crash);
    expect(second.stdout.split("\n").filter((line) => line.includes(`${NS}/web-n1`))).toEqual([
      expect.stringContaining(`Normal Adopted ${NS}/web-n1 web: Adopted running container web`),
    ]);
    const events = eventRows(workspace);
    for (const event of before.events) {
      expect(events.find((e) => e.pod === event.pod && e.reason === event.reason && e.message === event.message && e.first_at === event.first_at && e.count >= event.count)).toBeDefined();
    }
    expect(workspace.cli("events")).toContain("Started container web");

    // --stop-pods-on-exit: SIGTERM stops and removes every container and sandbox of the pods.
    expect(await second.terminate()).toBe(0);
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } })).toEqual([]);
  }, 90_000);
});
