/**
 * `kubectl get pods -w` against the compiled agent (`run --api-listen`, process runtime): the
 * agent's own store feeds the watch, and a crash loop's restarts reach kubectl as they happen.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { Agent, ensureBinary, Workspace, waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

let ws: Workspace;
let agent: Agent;

beforeAll(async () => {
  ensureBinary();
  ws = new Workspace();
  ws.write("crash.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: crash}\nspec:\n  containers:\n    - {name: crash, image: busybox, command: [sh, -c, 'sleep 1; exit 1']}\n");
  agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"]);
  await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  ws?.cleanup();
}, 60_000);

describeWithKubectl("get pods -w against the agent", KUBECTL.default, (kubectl) => {
  test("a crash loop's restarts, exits and back-off reach kubectl as they happen", async () => {
    using session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
    const child = spawn(kubectl, ["--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, "get", "pods", "-w"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TZ: "UTC" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += String(chunk)));
    const exited = new Promise((resolve) => child.once("close", resolve));
    try {
      // Exits at 1s and 2s+, then a 10s back-off: the second restart comes about 13s in.
      await waitFor("kubectl to print the second restart", () => /crash-n1\s+1\/1\s+Running\s+2 /.test(stdout), 40_000, () => stdout);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
    const statuses = stdout.trimEnd().split("\n").slice(1).map((line) => line.split(/\s+/).slice(2, 4).join(" "));
    const changes = statuses.filter((status, i) => status !== statuses[i - 1]);
    // As from a kubelet: the first crash restarted at once; the second's exit shown while its back-off
    // runs, CrashLoopBackOff from the pass at the wait's end, then the restart.
    expect(changes.slice(changes.indexOf("Running 1"))).toEqual(["Running 1", "Error 1", "CrashLoopBackOff 1", "Running 2"]);
  }, 60_000);
});
