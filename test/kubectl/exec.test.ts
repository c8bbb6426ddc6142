/**
 * `kubectl exec` against a running agent, on both runtimes: the command's output and exit code,
 * `-c`, piped stdin, and `-it` on a pseudo-terminal (kubectl itself runs on one, as in a shell).
 * kubectl 1.30+ speaks WebSocket; 1.27 to 1.29 only SPDY, which gets a clear refusal.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, ensureBinary, Workspace } from "../e2e/helpers.ts";
import { BUSYBOX, describeDocker } from "../docker/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

const POD = "shell-n1";

function manifest(image: string): string {
  const container = (name: string) => `    - {name: ${name}, image: ${image}, command: [sh, -c, 'sleep 600'], env: [{name: WHO, value: ${name}}]}\n`;
  return `apiVersion: v1\nkind: Pod\nmetadata: {name: shell}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n${container("main")}${container("side")}`;
}

/** Runs `kubectl exec -it POD -- sh` on a pseudo-terminal, types at the prompt, and returns what showed and the exit code. */
async function interactive(session: KubectlSession, kubectl: string, typed: string): Promise<{ screen: string; status: number }> {
  let screen = "";
  let prompted: () => void = () => undefined;
  const prompt = new Promise<void>((resolve) => (prompted = resolve));
  const child = Bun.spawn([kubectl, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "exec", "-it", POD, "--", "sh"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TERM: "xterm" },
    terminal: {
      cols: 100,
      rows: 30,
      data: (_terminal, data) => {
        screen += new TextDecoder().decode(data);
        if (/[#$] $/.test(screen)) prompted();
      },
    },
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await Promise.race([prompt, child.exited]);
  child.terminal?.write(typed);
  const status = await child.exited;
  clearTimeout(killer);
  child.terminal?.close();
  return { screen, status };
}

function execSuite(runtime: "process" | "docker", image: string): void {
  let ws: Workspace;
  let agent: Agent;

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    ws.write("shell.yaml", manifest(image));
    agent = new Agent(ws, ["--runtime", runtime, "--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"]);
    await agent.waitForOutput(`Started default/${POD} side`, 60_000);
    await agent.waitForOutput(`Started default/${POD} main`, 60_000);
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    ws?.cleanup();
  });

  const kubectls = { dispatcher: KUBECTL.default, "1.33": KUBECTL.versions["1.33"] };
  for (const [which, binary] of Object.entries(kubectls)) {
    describeWithKubectl(`kubectl exec (${which}) on the ${runtime} runtime`, binary, (kubectl) => {
      test("prints the command's output and exits with its code; -c picks the container", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        expect(await session.run(kubectl, ["exec", POD, "--", "sh", "-c", "echo hi; exit 3"])).toEqual({ status: 3, stdout: "hi\n", stderr: "command terminated with exit code 3\n" });
        expect(await session.run(kubectl, ["exec", POD, "-c", "side", "--", "sh", "-c", "echo $WHO"])).toMatchObject({ status: 0, stdout: "side\n" });
        expect(await session.run(kubectl, ["exec", POD, "-c", "main", "--", "sh", "-c", "echo $WHO; echo oops >&2"])).toEqual({ status: 0, stdout: "main\n", stderr: "oops\n" });
      }, 60_000);

      test("stdin piped with -i reaches the command, and its end ends it", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        expect(await session.run(kubectl, ["exec", "-i", POD, "--", "sh", "-c", "cat; echo done"], { stdin: "data\n" })).toMatchObject({ status: 0, stdout: "data\ndone\n" });
      }, 60_000);

      test("-it on a terminal: a shell that computes and exits 0", async () => {
        using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
        const { screen, status } = await interactive(session, kubectl, "echo $((6*7)); exit\r");
        expect(screen).toContain("\r\n42\r\n");
        expect(status).toBe(0);
      }, 60_000);
    });
  }

  describeWithKubectl(`kubectl 1.27 exec on the ${runtime} runtime`, KUBECTL.versions["1.27"], (kubectl) => {
    test("SPDY-only kubectl is told to use 1.30 or newer", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const result = await session.run(kubectl, ["exec", POD, "--", "true"]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("Error from server (BadRequest): exec is served over WebSocket (v5.channel.k8s.io, v4.channel.k8s.io), not SPDY: use kubectl 1.30 or newer");
    }, 60_000);
  });
}

execSuite("process", "busybox");
describeDocker("kubectl exec, docker runtime", () => execSuite("docker", BUSYBOX));
