/**
 * The compiled agent serves its API: `run --api-listen` on a port of the system's choosing, then
 * `minikubelet kubeconfig` is all kubectl needs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, ensureBinary, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession, startAgentWithApi } from "./harness.ts";

let ws: Workspace;
let agent: Agent;
let session: KubectlSession;
let url: string;

beforeAll(async () => {
  ws = new Workspace();
  ws.write("sleeper.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec:\n  containers:\n    - {name: sleeper, image: busybox, command: [sleep, '60']}\n");
  ({ agent, session, url } = await startAgentWithApi(ws, ["--stop-pods-on-exit"]));
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  session?.[Symbol.dispose]();
  ws?.cleanup();
}, 60_000);

describeWithKubectl("run --api-listen", KUBECTL.default, (kubectl) => {
  test("minikubelet kubeconfig points kubectl at the running agent", async () => {
    expect(ws.cli("kubeconfig")).toContain(`server: ${url}`);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:[1-9]\d*$/);
    const health = await session.run(kubectl, ["get", "--raw", "/readyz"]);
    expect(health).toMatchObject({ status: 0, stdout: "ok" });
    const version = await session.run(kubectl, ["version", "-o", "json"]);
    expect(version.status).toBe(0);
    expect(JSON.parse(version.stdout).serverVersion.major).toBe("1");
  });
});

test("a busy port is one error line and a Warning event; the agent runs its pods regardless", async () => {
  const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const other = new Workspace();
  try {
    other.write("sleeper.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec:\n  containers:\n    - {name: sleeper, image: busybox, command: [sleep, '60']}\n");
    const blocked = new Agent(other, ["--api-listen", `127.0.0.1:${busy.port}`, "--stop-pods-on-exit"]);
    try {
      await blocked.waitForOutput("Started default/sleeper-n1 sleeper", 15_000);
      const complaint = `cannot listen on 127.0.0.1:${busy.port}: the address is already in use`;
      expect(blocked.stderr.split("\n").filter((line) => line.includes(complaint))).toEqual([`minikubelet: api: ${complaint}; the agent runs its pods without its API`]);
      expect(blocked.stderr).toMatch(/minikubelet: api +off\n/);
      expect(blocked.stdout).toContain(`Warning APIListenFailed default/n1: Kubernetes API not served: ${complaint}`);
      expect(other.query<{ type: string; message: string }>("SELECT type, message FROM events WHERE reason = 'APIListenFailed'")).toEqual([
        { type: "Warning", message: `Kubernetes API not served: ${complaint}` },
      ]);
      expect(blocked.done).toBe(false);
    } finally {
      await blocked.terminate();
    }
  } finally {
    busy.stop(true);
    other.cleanup();
  }
}, 60_000);

describeWithKubectl("serve", KUBECTL.default, (kubectl) => {
  test("serve answers from the database alone, and kubeconfig follows it", async () => {
    const served = new Workspace();
    try {
      served.write("sleeper.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec:\n  containers:\n    - {name: sleeper, image: busybox, command: [sleep, '60']}\n");
      const first = new Agent(served, ["--api-listen", "off", "--stop-pods-on-exit"]);
      await first.waitForOutput("Started default/sleeper-n1 sleeper", 15_000);
      expect(await first.terminate()).toBe(0);
      const server = Bun.spawn([ensureBinary(), "serve", "--db", served.db, "--api-listen", "127.0.0.1:0"], { stderr: "pipe", stdout: "pipe" });
      try {
        let said = "";
        const reader = server.stderr.getReader();
        while (!/on https:\/\/\S+/.test(said)) {
          const chunk = await reader.read();
          if (chunk.done) break;
          said += new TextDecoder().decode(chunk.value);
        }
        const url = /on (https:\/\/\S+)/.exec(said)?.[1];
        expect(url).toMatch(/^https:\/\/127\.0\.0\.1:[1-9]\d*$/);
        const kubeconfig = served.cli("kubeconfig");
        expect(kubeconfig).toContain(`server: ${url}`);
        using session = new KubectlSession(served.db, kubeconfig);
        expect(await session.run(kubectl, ["get", "--raw", "/livez"])).toMatchObject({ status: 0, stdout: "ok" });
      } finally {
        server.kill("SIGTERM");
        expect(await server.exited).toBe(0);
      }
    } finally {
      served.cleanup();
    }
  }, 60_000);
});
