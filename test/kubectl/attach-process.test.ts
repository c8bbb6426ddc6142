/**
 * The process runtime under kubectl 1.27 (SPDY) and 1.33 (WebSocket): `kubectl run NAME
 * --image=busybox -- ARGS` runs its args as the command; `kubectl attach` follows a container's
 * output; an attach that needs the container's stdin or terminal, which this runtime's monitor does
 * not hold, is refused with a Status saying so, and `kubectl run -i` falls back to the logs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

const BOUND_MS = 30_000;
const NO_STDIN = "the process runtime does not keep a container's stdin open (stdin: true is not honoured; it reads /dev/null): attach without -i to follow its output";
const NO_TERMINAL = "the process runtime runs every container without a terminal (tty: true is not honoured): use the docker runtime to attach to it";

let ws: Workspace;
let agent: Agent;
const node = "kattachp";

beforeAll(async () => {
  ensureBinary();
  ws = new Workspace();
  const container = (name: string, extra: string) => `    - {name: ${name}, image: busybox, command: [sleep, '600']${extra}}\n`;
  ws.write("shells.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: shells}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n${container("stdin", ", stdin: true")}${container("tty", ", stdin: true, tty: true")}`);
  agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"], { node });
  await agent.waitForOutput(`Started default/shells-${node} tty`, 30_000);
}, 60_000);

afterAll(async () => {
  await agent?.terminate();
  ws?.cleanup();
});

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

    test("attach -i to a container with stdin, or to one with a terminal, is refused with a Status saying why", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const stdin = await session.run(kubectl, ["attach", "-i", `shells-${node}`, "-c", "stdin"], { stdin: "x\n", timeoutMs: BOUND_MS });
      expect(stdin.status).toBe(1);
      expect(stdin.stderr).toContain(`Error from server (BadRequest): cannot attach to container stdin in pod shells-${node}: ${NO_STDIN}\n`);
      const tty = await session.run(kubectl, ["attach", `shells-${node}`, "-c", "tty"], { timeoutMs: BOUND_MS });
      expect(tty.status).toBe(1);
      expect(tty.stderr).toContain(`Error from server (BadRequest): cannot attach to container tty in pod shells-${node}: ${NO_TERMINAL}\n`);
    }, 60_000);

    test("run -i --rm: the attach is refused, kubectl says why and falls back to the logs, the pod's exit code is kubectl's, and the pod goes", async () => {
      using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
      const name = `once-${tag}`;
      const result = await session.run(kubectl, ["run", "-i", "--rm", "--restart=Never", name, "--image=busybox", "--", "sh", "-c", "sleep 2; exit 3"], { stdin: "ignored\n", timeoutMs: BOUND_MS });
      expect(result.stderr).toContain(`warning: couldn't attach to pod/${name}, falling back to streaming logs: cannot attach to container ${name} in pod ${name}: ${NO_STDIN}\n`);
      // kubectl then reads the logs once (not followed), waits for the pod to end and deletes it.
      expect(result.stdout).toEndWith(`pod "${name}" deleted\n`);
      expect(result.stderr).toContain(`pod default/${name} terminated (Error)`);
      expect(result.status).toBe(3);
      await waitFor(`pod ${name} gone`, async () => (await session.run(kubectl, ["get", "pod", name])).stderr.includes("NotFound"), 20_000, () => agent.stdout);
    }, 60_000);
  });
}
