/**
 * The compiled agent serves pods/log: `run --api-listen` on each runtime, kubectl reading a crashed
 * attempt, and following the current one to the end of its container.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BUSYBOX, describeDocker } from "../docker/helpers.ts";
import { Agent, ensureBinary, Workspace, waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

// The process runtime has no mount namespace: the emptyDir is at $MINIKUBELET_VOLUME_STATE.
const MANIFEST = (image: string) => `apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  restartPolicy: OnFailure
  volumes: [{name: state, emptyDir: {}}]
  containers:
    - name: talk
      image: ${image}
      volumeMounts: [{name: state, mountPath: /state}]
      command: [sh, -c, 'd=\${MINIKUBELET_VOLUME_STATE:-/state}; n=$(cat $d/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > $d/n; echo "run $n"; sleep 1; echo "done $n"; [ $n -gt 1 ] || exit 1']
`;

function agentLogs(runtime: "process" | "docker", image: string): void {
  let ws: Workspace;
  let agent: Agent;
  const node = `logs-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    ws.write("talker.yaml", MANIFEST(image));
    agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--runtime", runtime, "--stop-pods-on-exit"], { node });
    await waitFor("the second run started", () => agent.stdout.includes("Started default/talker-" + node + " talk") && /run 2/.test(ws.run("logs", `talker-${node}`).stdout), 60_000, () => agent.stderr + agent.stdout);
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    ws?.cleanup();
  }, 60_000);

  describeWithKubectl(`pods/log from the agent (${runtime} runtime)`, KUBECTL.default, (kubectl) => {
    test("the previous attempt, and a follow of the current one that ends when it exits", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const pod = `talker-${node}`;
      expect(await session.run(kubectl, ["logs", pod, "--previous"])).toEqual({ status: 0, stdout: "run 1\ndone 1\n", stderr: "" });
      expect(await session.run(kubectl, ["logs", "-f", pod], { timeoutMs: 20_000 })).toEqual({ status: 0, stdout: "run 2\ndone 2\n", stderr: "" });
      await agent.waitForOutput(`Exited default/talker-${node} talk`);
    }, 60_000);
  });
}

describe("run --api-listen --runtime process", () => agentLogs("process", "busybox"));
describeDocker("run --api-listen --runtime docker", () => agentLogs("docker", BUSYBOX));
