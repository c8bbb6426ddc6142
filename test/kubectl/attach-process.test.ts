/**
 * The process runtime under kubectl 1.27 (SPDY) and 1.33 (WebSocket), issue 25: the compiled
 * monitor holds a container's stdin (a pipe) or its terminal behind its attach socket.
 * `kubectl run NAME --image=busybox -- ARGS` runs its args as the command; `kubectl attach` follows
 * a container's output; `attach -i` feeds a stdin container's shell; `run -it --rm` gives a terminal
 * (its size from kubectl) and `run -i --rm` a piped stdin, their exit codes kubectl's, and --rm
 * leaves no pod.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";
import { onTerminal } from "./terminal.ts";

const BOUND_MS = 30_000;

let ws: Workspace;
let agent: Agent;
const node = "kattachp";
const READER = `reader-${node}`;

beforeAll(async () => {
  ensureBinary();
  ws = new Workspace();
  // stdin without stdinOnce: every attach that ends only detaches, so each kubectl gets its turn.
  ws.write("reader.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: reader}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n    - {name: reader, image: busybox, stdin: true, command: [sh, -c, 'while read line; do echo "got $line"; done']}\n`);
  agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"], { node });
  await agent.waitForOutput(`Started default/${READER} reader`, 30_000);
}, 60_000);

afterAll(async () => {
  await agent?.terminate();
  ws?.cleanup();
});

async function gone(session: KubectlSession, kubectl: string, name: string): Promise<void> {
  await waitFor(`pod ${name} gone`, async () => (await session.run(kubectl, ["get", "pod", name])).stderr.includes("NotFound"), 20_000, () => agent.stdout);
}

for (const [version, binary] of [["1.27", KUBECTL.versions["1.27"]], ["1.33", KUBECTL.versions["1.33"]]] as const) {
  const tag = version.replace(".", "-");
  describeWithKubectl(`kubectl ${version} on the process runtime`, binary, (kubectl) => {
    test("run NAME --image -- ARGS (no --command): the args run as the command, args[0] the program; attach follows its output from now on", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const name = `ticker-${tag}`;
      const created = await session.run(kubectl, ["run", name, "--image=busybox", "--", "sh", "-c", "i=0; while [ $i -lt 600 ]; do echo tick $i; i=$((i+1)); sleep 0.1; done"]);
      expect(created).toMatchObject({ status: 0, stdout: `pod/${name} created\n` });
      await waitFor(`${name}'s third tick`, async () => (await session.run(kubectl, ["logs", name])).stdout.includes("tick 3\n"), BOUND_MS, () => agent.stdout);
      const child = Bun.spawn([kubectl, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "attach", name], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir },
        stdout: "pipe",
        stderr: "pipe",
      });
      let stdout = "";
      const reading = (async () => {
        for await (const chunk of child.stdout) stdout += new TextDecoder().decode(chunk);
      })();
      try {
        await waitFor("two ticks through attach", () => (stdout.match(/^tick \d+$/gm) ?? []).length >= 2, BOUND_MS, () => stdout);
      } finally {
        child.kill();
        await child.exited;
        await reading;
      }
      const ticks = (stdout.match(/^tick (\d+)$/gm) ?? []).map((line) => Number(line.split(" ")[1]));
      // What the log held before the attach is not replayed; what follows comes in order.
      expect(ticks[0]).toBeGreaterThan(3);
      expect(ticks[1]).toBe(ticks[0]! + 1);
      expect((await session.run(kubectl, ["delete", "pod", name, "--grace-period=1"], { timeoutMs: BOUND_MS })).status).toBe(0);
    }, 60_000);

    test("attach -i to a running stdin container: each line reaches its shell and its answer comes back; the end of stdin detaches", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const child = Bun.spawn([kubectl, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "attach", "-i", "-q", READER], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      const killer = setTimeout(() => child.kill("SIGKILL"), BOUND_MS);
      let stdout = "";
      const reading = (async () => {
        for await (const chunk of child.stdout) stdout += new TextDecoder().decode(chunk);
      })();
      for (const word of ["one", "two"]) {
        child.stdin.write(`${word} ${version}\n`);
        await waitFor(`the answer to ${word}`, () => stdout.includes(`got ${word} ${version}\n`), BOUND_MS, () => stdout);
      }
      child.stdin.end();
      const status = await child.exited;
      clearTimeout(killer);
      await reading;
      expect({ status, stdout }).toEqual({ status: 0, stdout: `got one ${version}\ngot two ${version}\n` });
      expect(agent.stdout).not.toContain(`Exited default/${READER}`);
    }, 60_000);

    test("run -it --rm on a terminal: typed input reaches the shell, the terminal has kubectl's size, its exit code is kubectl's, and the pod goes", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const name = `it-${tag}`;
      const args = ["run", "-it", "--rm", "--restart=Never", name, "--image=busybox", "--", "sh"];
      const { screen, status } = await onTerminal(session, kubectl, args, "stty size; echo $((6*7)); exit 4\r", BOUND_MS);
      expect(screen).toContain("\r\n30 100\r\n42\r\n");
      expect(screen).toContain(`pod "${name}" deleted`);
      expect(status).toBe(4);
      await gone(session, kubectl, name);
    }, 60_000);

    test("run -i --rm with stdin piped: the script's output, its exit code, and the pod goes", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const name = `pipe-${tag}`;
      const result = await session.run(kubectl, ["run", "-i", "--rm", "--restart=Never", name, "--image=busybox", "--", "sh"], { stdin: "echo piped in\nexit 3\n", timeoutMs: BOUND_MS });
      expect(result.stdout).toBe(`piped in\npod "${name}" deleted\n`);
      expect(result.status).toBe(3);
      await gone(session, kubectl, name);
    }, 60_000);
  });
}
