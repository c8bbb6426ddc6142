/**
 * `kubectl exec` against a running agent, on both runtimes: the command's output and exit code,
 * `-c`, piped stdin, and `-it` on a pseudo-terminal (kubectl itself runs on one, as in a shell).
 * kubectl 1.30+ speaks WebSocket; 1.27 to 1.29 SPDY/3.1 (1.29 after its WebSocket try is refused).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, ensureBinary, Workspace } from "../e2e/helpers.ts";
import { BUSYBOX, describeDocker } from "../docker/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";
import { onTerminal } from "./terminal.ts";

function manifest(image: string): string {
  const container = (name: string) => `    - {name: ${name}, image: ${image}, command: [sh, -c, 'sleep 600'], env: [{name: WHO, value: ${name}}]}\n`;
  return `apiVersion: v1\nkind: Pod\nmetadata: {name: shell}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n${container("main")}${container("side")}`;
}

/**
 * The bound on one kubectl exec (each takes about a second, a few on a loaded machine): a stuck
 * session fails the test in this time with what kubectl printed, well before the test's own limit.
 */
const EXEC_BOUND_MS = 15_000;

function execSuite(runtime: "process" | "docker", image: string): void {
  // A node of its own: a docker engine takes one agent per node name.
  const node = `exec-${runtime}`;
  const POD = `shell-${node}`;
  let ws: Workspace;
  let agent: Agent;

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    ws.write("shell.yaml", manifest(image));
    agent = new Agent(ws, ["--runtime", runtime, "--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"], { node });
    await agent.waitForOutput(`Started default/${POD} side`, 60_000);
    await agent.waitForOutput(`Started default/${POD} main`, 60_000);
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    ws?.cleanup();
  }, 60_000);

  const kubectls = {
    dispatcher: KUBECTL.default,
    "1.33": KUBECTL.versions["1.33"],
    "1.27 over SPDY": KUBECTL.versions["1.27"],
    "1.28 over SPDY": KUBECTL.versions["1.28"],
    "1.29 over SPDY": KUBECTL.versions["1.29"],
  };
  for (const [which, binary] of Object.entries(kubectls)) {
    describeWithKubectl(`kubectl exec (${which}) on the ${runtime} runtime`, binary, (kubectl) => {
      test("prints the command's output and exits with its code; -c picks the container", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const defaulted = 'Defaulted container "main" out of: main, side\n';
        expect(await session.run(kubectl, ["exec", POD, "--", "sh", "-c", "echo hi; exit 3"], { timeoutMs: EXEC_BOUND_MS })).toEqual({ status: 3, stdout: "hi\n", stderr: `${defaulted}command terminated with exit code 3\n` });
        expect(await session.run(kubectl, ["exec", POD, "-c", "side", "--", "sh", "-c", "echo $WHO"], { timeoutMs: EXEC_BOUND_MS })).toMatchObject({ status: 0, stdout: "side\n" });
        expect(await session.run(kubectl, ["exec", POD, "-c", "main", "--", "sh", "-c", "echo $WHO; echo oops >&2"], { timeoutMs: EXEC_BOUND_MS })).toEqual({ status: 0, stdout: "main\n", stderr: "oops\n" });
      }, 60_000);

      test("stdin piped with -i reaches the command, and its end ends it", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        expect(await session.run(kubectl, ["exec", "-i", POD, "--", "sh", "-c", "cat; echo done"], { stdin: "data\n", timeoutMs: EXEC_BOUND_MS })).toMatchObject({ status: 0, stdout: "data\ndone\n" });
      }, 60_000);

      test("-it on a terminal: a shell of the terminal's size that computes and exits 0", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const { screen, status } = await onTerminal(session, kubectl, ["exec", "-it", POD, "--", "sh"], "stty size; echo $((6*7)); exit\r", EXEC_BOUND_MS);
        expect(screen).toContain("\r\n30 100\r\n42\r\n");
        expect(status).toBe(0);
      }, 60_000);
    });
  }

  // Last, as it ends the agent: a stop must not wait on sessions the server closed (Bun 1.3).
  test(`after its exec sessions the ${runtime} agent still stops in order`, async () => {
    expect(await agent.terminate(15_000)).toBe(0);
  }, 30_000);
}

execSuite("process", "busybox");
describeDocker("kubectl exec, docker runtime", () => execSuite("docker", BUSYBOX));
