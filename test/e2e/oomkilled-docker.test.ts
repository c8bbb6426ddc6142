/**
 * Issue 14 end to end, docker runtime, compiled binary: a container over its memory limit is killed
 * by the kernel, and the engine's State.OOMKilled becomes the attempt's reason: `get pods` says
 * OOMKilled (restartPolicy Never, and under Always while the restart waits), `describe` shows reason OOMKilled
 * and exit 137. Its own node and namespace, so it never meets another agent's pods.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { Agent, ensureBinary, podTable, waitFor, Workspace } from "./helpers.ts";

const SUFFIX = randomBytes(3).toString("hex");
const NS = `e2e-${SUFFIX}`;
const NODE = `oom-${SUFFIX}`;

/** The shell holds the whole substitution in memory: about 50 MB against a 16 MiB limit, no swap. */
const hog = (name: string, restartPolicy: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${NS}}
spec:
  restartPolicy: ${restartPolicy}
  terminationGracePeriodSeconds: 1
  containers:
    - name: hog
      image: ${BUSYBOX}
      imagePullPolicy: Never
      command: ["sh", "-c", "x=$(head -c 50000000 /dev/zero | tr '\\\\0' a); echo survived"]
      resources:
        limits: {memory: 16Mi}
`;

describeDocker("OOMKilled on the docker runtime (compiled binary)", () => {
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
  });

  test("the kernel's kill is recorded OOMKilled (137): get pods and describe say so", async () => {
    const workspace = (ws = new Workspace());
    workspace.write("once.yaml", hog("once", "Never"));
    workspace.write("loop.yaml", hog("loop", "Always"));
    agent = new Agent(workspace, ["--runtime", "docker", "--backoff-base", "5", "--backoff-max", "5"], { node: NODE });
    const once = `once-${NODE}`;
    const loop = `loop-${NODE}`;
    await waitFor(
      "once OOMKilled, and loop OOMKilled again while its back-off runs",
      () => {
        const table = podTable(workspace, NS);
        return table[once]?.[1] === "OOMKilled" && table[loop]?.[1] === "OOMKilled" && Number(table[loop]?.[2]) >= 2;
      },
      60_000,
      () => workspace.cli("get", "pods", "-n", NS) + agent!.stderr,
    );
    const described = workspace.cli("describe", "pod", once, "-n", NS);
    expect(described).toMatch(/Reason:\s+OOMKilled/);
    expect(described).toMatch(/Exit Code:\s+137/);
    expect(described).toMatch(/Limits:\s+memory:\s+16Mi/);
    expect(workspace.cli("describe", "pod", loop, "-n", NS)).toMatch(/Last State:\s+Terminated\s+Reason:\s+OOMKilled\s+Exit Code:\s+137/);
  }, 90_000);
});
