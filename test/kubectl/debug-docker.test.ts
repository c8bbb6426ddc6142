/**
 * `kubectl debug POD --target` on the docker runtime: the ephemeral container joins the pod's
 * network (it has the pod's IP) and, aimed at a container, that container's PID namespace (it sees
 * the target's processes), while the pod's own containers run on untouched; `debug -it` attaches to
 * it, a terminal's typed input reaching its shell.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LABEL } from "../../src/runtime/labels.ts";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";
import { onTerminal } from "./terminal.ts";

const NAMESPACE = "kubectl-debug";

describeDocker("kubectl debug on the docker runtime", () => {
  let ws: Workspace;
  let agent: Agent;
  let session: KubectlSession;

  beforeAll(async () => {
    ws = new Workspace();
    ensureBinary();
    agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit", "--runtime", "docker"], { node: "kdebug" });
    await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
    session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    session?.[Symbol.dispose]();
    ws?.cleanup();
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NAMESPACE}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  }, 60_000);

  describeWithKubectl("debug --target", KUBECTL.versions["1.33"], (kubectl) => {
    const run = (...args: string[]) => session.run(kubectl, ["-n", NAMESPACE, ...args], { timeoutMs: 60_000 });

    test("the debug container has the pod's address and sees its target's processes", async () => {
      const file = join(session.dir, "web.yaml");
      writeFileSync(
        file,
        [
          "apiVersion: v1",
          "kind: Pod",
          `metadata: {name: web, namespace: ${NAMESPACE}}`,
          "spec:",
          "  terminationGracePeriodSeconds: 2",
          "  containers:",
          `  - {name: web, image: "${BUSYBOX}", imagePullPolicy: Never, command: [sh, -c, 'trap "exit 143" TERM; sleep 3601 & wait']}`,
          "",
        ].join("\n"),
      );
      // As on a cluster, the namespace exists before a pod is created in it (NamespaceLifecycle).
      expect((await session.run(kubectl, ["create", "namespace", NAMESPACE])).status).toBe(0);
      expect((await session.run(kubectl, ["apply", "-f", file])).status).toBe(0);
      await agent.waitForOutput(`Started ${NAMESPACE}/web web`, 60_000);
      const script = "ps -o pid,args; ip -4 -o addr show eth0; sleep 600";
      const debug = await run("debug", "web", `--image=${BUSYBOX}`, "--image-pull-policy=Never", "-c", "dbg", "--target=web", "--", "sh", "-c", script);
      expect(debug).toMatchObject({ status: 0 });
      await agent.waitForOutput(`Started ${NAMESPACE}/web dbg`, 60_000);
      const output = await waitFor("the debug container's output", async () => {
        const { stdout } = await run("logs", "web", "-c", "dbg");
        return stdout.includes("inet ") ? stdout : undefined;
      }, 20_000);
      // The target's shell is PID 1 of the namespace the debug container joined.
      expect(output).toMatch(/^ +1 sh -c trap "exit 143" TERM; sleep 3601 & wait$/m);
      expect(output).toMatch(/sleep 3601$/m);
      const podIP = (await run("get", "pod", "web", "-o", "jsonpath={.status.podIP}")).stdout;
      expect(podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(output).toContain(`inet ${podIP}/`);
      const statuses = await run("get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].restartCount} {.status.ephemeralContainerStatuses[0].name} {.status.ephemeralContainerStatuses[0].containerID}");
      expect(statuses.stdout).toMatch(/^0 dbg docker:\/\/[0-9a-f]{64}$/);
    }, 120_000);

    test("debug -it --target: kubectl attaches to the debug container's shell, which sees the target's processes", async () => {
      const args = ["-n", NAMESPACE, "debug", "-it", "web", `--image=${BUSYBOX}`, "--image-pull-policy=Never", "-c", "shell", "--target=web", "--", "sh"];
      // The shell reads what is typed once kubectl has attached: it prints the target's sleep, then exits 3.
      const { screen, status } = await onTerminal(session, kubectl, args, "ps -o args | grep -c '^sleep 3601'; exit 3\r", 60_000);
      expect(screen).toContain('Targeting container "web"');
      expect(screen).toMatch(/\r\n1\r\n/);
      // An attach ends with Success when the container exits (the kubelet's attach carries no exit code); the status has it.
      expect(status).toBe(0);
      const state = await waitFor("the shell's end in its status", async () => {
        const { stdout } = await run("get", "pod", "web", "-o", 'jsonpath={.status.ephemeralContainerStatuses[?(@.name=="shell")].state.terminated.exitCode}');
        return stdout || undefined;
      }, 20_000);
      expect(state).toBe("3");
    }, 90_000);
  });
});
