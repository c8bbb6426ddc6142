/**
 * `review --pod` against a real agent's database: a container whose liveness probe (tcpSocket, 2 s
 * period) can never pass is killed by the agent, with real processes, and the compiled binary's
 * review backs its finding with those kills and each attempt's run time.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { Agent, freePort, processE2E, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

test("review --db --pod: the liveness kills the agent recorded back liveness-without-startup-probe; exit 1", async () => {
  const ws = (e2e.ws = new Workspace());
  // A port nothing listens on: every liveness check fails, as for an app still starting.
  const port = await freePort();
  const manifest = `apiVersion: v1
kind: Pod
metadata: {name: slow}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: busybox
      command: [sleep, "3600"]
      ports: [{name: http, containerPort: ${port}}]
      livenessProbe: {tcpSocket: {port: http}, periodSeconds: 2}
      readinessProbe: {httpGet: {path: /readyz, port: http}, periodSeconds: 2}
`;
  ws.write("slow.yaml", manifest);
  const agent = new Agent(ws, ["--backoff-base", "1", "--backoff-max", "1"]);
  e2e.agents.push(agent);
  await waitFor("two liveness kills", () => (agent.stdout.match(/Killing default\/slow-n1 app/g) ?? []).length >= 2, 30_000, () => agent.stdout + agent.stderr);

  const review = ws.run("review", join(ws.manifests, "slow.yaml"), "--pod", "slow-n1");
  expect(review.stderr).toBe("");
  expect(review.status).toBe(1);
  expect(review.stdout).toContain("  warning liveness-without-startup-probe  spec.containers[0].livenessProbe\n");
  // Each attempt's run time comes from the attempts table (no bound on it here: the machine may be loaded).
  expect(review.stdout).toMatch(/\n {10}seen: liveness killed it \d+ times; (each kill came \d+ s|kills came \d+ to \d+ s) after start\n/);

  const yaml = ws.run("review", join(ws.manifests, "slow.yaml"), "--pod", "slow-n1", "-o", "yaml");
  expect(yaml.stdout).toContain("      # review: added: ");
  expect(yaml.stdout).toContain("      startupProbe:\n        tcpSocket:\n          port: http\n");
});
