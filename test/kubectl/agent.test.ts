/**
 * The compiled agent serves its API: `run --api-listen` on a port of the system's choosing, then
 * `minikubelet kubeconfig` is all kubectl needs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, ensureBinary, Workspace, waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

let ws: Workspace;
let agent: Agent;

beforeAll(async () => {
  ensureBinary();
  ws = new Workspace();
  ws.write("sleeper.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec:\n  containers:\n    - {name: sleeper, image: busybox, command: [sleep, '60']}\n");
  agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"]);
  await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  ws?.cleanup();
});

describeWithKubectl("run --api-listen", KUBECTL.default, (kubectl) => {
  test("minikubelet kubeconfig points kubectl at the running agent", async () => {
    const kubeconfig = ws.cli("kubeconfig");
    const server = /^\s+server: (\S+)$/m.exec(kubeconfig)?.[1];
    expect(agent.stderr).toContain(`api           ${server}`);
    using session = new KubectlSession(ws.db, kubeconfig);
    const health = await session.run(kubectl, ["get", "--raw", "/readyz"]);
    expect(health).toMatchObject({ status: 0, stdout: "ok" });
    const version = await session.run(kubectl, ["version", "-o", "json"]);
    expect(version.status).toBe(0);
    expect(JSON.parse(version.stdout).serverVersion.major).toBe("1");
  });
});
