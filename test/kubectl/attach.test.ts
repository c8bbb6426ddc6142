/**
 * `kubectl attach` and `kubectl run -i`/`-it --rm` against the compiled agent on the docker
 * runtime, with kubectl 1.27 (SPDY) and 1.33 (WebSocket): typed or piped input reaches the
 * container's shell, its exit code comes back as kubectl's, and --rm leaves no pod or container.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";
import { onTerminal } from "./terminal.ts";

/** One kubectl run's bound: its pod starts (a second or two) and the session ends well within it. */
const RUN_BOUND_MS = 30_000;
const NAMESPACE = "kubectl-attach";
const IMAGE = [`--image=${BUSYBOX}`, "--image-pull-policy=Never"];

describeDocker("kubectl attach and run -i on the docker runtime", () => {
  const node = "kattach";
  const POD = `reader-${node}`;
  let ws: Workspace;
  let agent: Agent;

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    // stdin without stdinOnce: every attach that ends only detaches, so each kubectl gets its turn.
    ws.write("reader.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: reader, namespace: ${NAMESPACE}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n    - {name: reader, image: ${BUSYBOX}, imagePullPolicy: Never, stdin: true, command: [sh, -c, 'while read line; do echo "got $line"; done']}\n`);
    agent = new Agent(ws, ["--runtime", "docker", "--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"], { node });
    await agent.waitForOutput(`Started ${NAMESPACE}/${POD} reader`, 60_000);
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    ws?.cleanup();
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NAMESPACE}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  });

  /** Waits until the API no longer has the pod, then the engine no longer has its containers (removed after the API's row, as the kubelet's are). */
  async function gone(session: KubectlSession, kubectl: string, name: string): Promise<void> {
    await waitFor(`pod ${name} gone`, async () => (await session.run(kubectl, ["-n", NAMESPACE, "get", "pod", name])).stderr.includes("NotFound"), 20_000, () => agent.stdout);
    const containers = () => docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NAMESPACE}`, `${LABEL.podName}=${name}`] } });
    await waitFor(`the containers of ${name} removed`, async () => (await containers()).length === 0, 10_000, () => agent.stdout);
  }

  for (const [version, binary] of [["1.27", KUBECTL.versions["1.27"]], ["1.33", KUBECTL.versions["1.33"]]] as const) {
    const tag = version.replace(".", "-");
    describeWithKubectl(`kubectl ${version}`, binary, (kubectl) => {
      test("attach -i to a running stdin container: each line reaches its shell and its answer comes back; the end of stdin detaches", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const child = Bun.spawn([kubectl, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "-n", NAMESPACE, "attach", "-i", "-q", POD], {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir },
          stdin: "pipe",
          stdout: "pipe",
          stderr: "pipe",
        });
        const killer = setTimeout(() => child.kill("SIGKILL"), RUN_BOUND_MS);
        let stdout = "";
        const reading = (async () => {
          for await (const chunk of child.stdout) stdout += new TextDecoder().decode(chunk);
        })();
        // The engine ends an attach at the end of its stdin (no stdinOnce): the answers are read before it.
        for (const word of ["one", "two"]) {
          child.stdin.write(`${word} ${version}\n`);
          await waitFor(`the answer to ${word}`, () => stdout.includes(`got ${word} ${version}\n`), RUN_BOUND_MS, () => stdout);
        }
        child.stdin.end();
        const status = await child.exited;
        clearTimeout(killer);
        await reading;
        expect({ status, stdout }).toEqual({ status: 0, stdout: `got one ${version}\ngot two ${version}\n` });
        expect(agent.stdout).not.toContain(`Exited ${NAMESPACE}/${POD}`);
      }, 60_000);

      test("run -it --rm on a terminal: typed input reaches the shell, its exit code is kubectl's, and the pod goes", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const name = `it-${tag}`;
        const args = ["-n", NAMESPACE, "run", "-it", "--rm", "--restart=Never", name, ...IMAGE, "--", "sh"];
        const { screen, status } = await onTerminal(session, kubectl, args, "stty size; echo $((6*7)); exit 4\r", RUN_BOUND_MS);
        expect(screen).toContain("\r\n30 100\r\n42\r\n");
        expect(screen).toContain(`pod "${name}" deleted`);
        expect(status).toBe(4);
        await gone(session, kubectl, name);
      }, 60_000);

      test("run -i --rm with stdin piped, under run's default restart policy (Always): the script's output, exit 0, and the pod goes", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const name = `pipe-${tag}`;
        // Under Always the shell is started again before the delete; as PID 1 it ignores SIGTERM, so
        // the pod goes when its grace runs out: a short one keeps the test short.
        const overrides = ["--overrides", JSON.stringify({ spec: { terminationGracePeriodSeconds: 1 } })];
        const result = await session.run(kubectl, ["-n", NAMESPACE, "run", "-i", "--rm", name, ...IMAGE, ...overrides, "--", "sh"], { stdin: "echo piped from $HOSTNAME\nexit 0\n", timeoutMs: RUN_BOUND_MS });
        expect(result.stdout).toBe(`piped from ${name}\npod "${name}" deleted\n`);
        expect(result.status).toBe(0);
        await gone(session, kubectl, name);
      }, 60_000);
    });
  }
});
