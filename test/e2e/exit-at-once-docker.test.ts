/**
 * `run --stop-pods-on-exit` on the docker runtime, told twice to stop (Ctrl-C again while a pod
 * waits out its grace): it exits at once (130), and gives up the engine-wide node lock on the way,
 * so the node is not left locked by an agent that is gone (the lock container used to stay behind,
 * one per such exit, until the next agent on that node took it over). The pods are left as after a
 * kill -9, for the next agent to adopt or stop.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { nodeLockName } from "../../src/runtime/docker/docker-node-lock.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { Agent, ensureBinary, waitFor, Workspace } from "./helpers.ts";

const NS = "e2e-exit-at-once";
const NODE = "exit-at-once";

/** A sleep as PID 1 ignores SIGTERM, so the stop waits out the whole grace period. */
const STUBBORN = `apiVersion: v1
kind: Pod
metadata: {name: stubborn, namespace: ${NS}}
spec:
  terminationGracePeriodSeconds: 60
  containers:
    - {name: app, image: ${BUSYBOX}, imagePullPolicy: Never, command: [sleep, "600"]}
`;

async function lockContainers(): Promise<string[]> {
  const all = await docker.listContainers({ all: true, filters: { name: [nodeLockName(NODE)] } });
  return all.map((c) => c.Names[0]!.replace(/^\//, "")).filter((name) => name === nodeLockName(NODE));
}

describeDocker("exit at once on the docker runtime", () => {
  let ws: Workspace | undefined;
  let agent: Agent | undefined;

  beforeAll(() => {
    ensureBinary();
  });

  afterAll(async () => {
    await agent?.terminate();
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    ws?.cleanup();
  }, 60_000);

  test("a second SIGTERM while a pod waits out its grace: exit 130 within seconds, the node lock given up", async () => {
    ws = new Workspace();
    ws.write("stubborn.yaml", STUBBORN);
    agent = new Agent(ws, ["--runtime", "docker", "--stop-pods-on-exit"], { node: NODE });
    await agent.waitForOutput(`Started ${NS}/stubborn-${NODE} app`, 60_000);
    expect(await lockContainers()).toEqual([nodeLockName(NODE)]);
    process.kill(agent.pid, "SIGTERM");
    await agent.waitForOutput(`Killing ${NS}/stubborn-${NODE} app`, 15_000);
    const asked = Date.now();
    process.kill(agent.pid, "SIGTERM");
    expect(await agent.exited).toBe(130);
    // Well inside the pod's 60 s grace: the second signal ended the wait, not the grace.
    expect(Date.now() - asked).toBeLessThan(30_000);
    expect(await waitFor("the node lock given up", async () => ((await lockContainers()).length === 0 ? "free" : undefined), 5_000)).toBe("free");
  }, 120_000);
});
