/**
 * Issue 11 end to end, docker runtime, compiled binary: the scenarios of
 * adopt-unrecorded-process.test.ts (kill -9 at `Started` before the checkpoint, the container exits
 * with no agent running): a Never container ran exactly once, an OnFailure container that exited 0
 * is not run again, a crash loop keeps every run. The marker file is on the host, mounted in.
 */
import { afterAll, afterEach, beforeAll, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { Agent, ensureBinary, Workspace } from "./helpers.ts";
import { crashLoopKeepsEveryRun, runsOnce, type Scenario } from "./unrecorded-scenarios.ts";

const NS = `e2e-${randomBytes(3).toString("hex")}`;

async function removeNamespace(): Promise<void> {
  const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
}

describeDocker("an attempt started but not checkpointed, docker runtime (compiled binary)", () => {
  let ws: Workspace | undefined;
  const agents: Agent[] = [];
  const scenario: Scenario = {
    namespace: NS,
    image: BUSYBOX,
    extraArgs: ["--runtime", "docker"],
    track: (agent) => agents.push(agent),
    allExited: async () => {
      const found = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`, `${LABEL.containerName}=main`] } });
      return found.length > 0 && found.every((c) => c.State === "exited");
    },
    markerMount: (dir) => ({
      mounts: "      volumeMounts: [{name: marker, mountPath: /marker}]\n",
      volumes: `  volumes: [{name: marker, hostPath: {path: ${JSON.stringify(dir)}, type: Directory}}]\n`,
    }),
  };

  beforeAll(() => {
    ensureBinary();
  });

  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.terminate();
    await removeNamespace();
    ws?.cleanup();
  });

  afterAll(removeNamespace);

  test("restartPolicy Never: killed at Started, exited while down, ran exactly once", async () => {
    await runsOnce((ws = new Workspace()), scenario, { restartPolicy: "Never", exitCode: 3, phase: "Failed" });
  }, 50_000);

  test("restartPolicy OnFailure, exit 0: killed at Started, exited while down, not run again", async () => {
    await runsOnce((ws = new Workspace()), scenario, { restartPolicy: "OnFailure", exitCode: 0, phase: "Succeeded" });
  }, 50_000);

  test("crash loop: killed at a restart's Started, every run keeps its exit code, log and count", async () => {
    await crashLoopKeepsEveryRun((ws = new Workspace()), scenario);
  }, 60_000);
});
