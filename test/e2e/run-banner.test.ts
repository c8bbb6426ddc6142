/** `run` says at start which agent it is: pid, database, runtime and its root, node, API address. */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { Agent, Workspace, processE2E, waitFor } from "./helpers.ts";

const e2e = processE2E();

test("run prints its pid, database, runtime, runtime root, node and API address before the first event", async () => {
  const ws = (e2e.ws = new Workspace());
  const agent = new Agent(ws);
  e2e.agents.push(agent);
  await waitFor("the start banner", () => agent.stderr.includes("minikubelet: api"), 10_000, () => agent.stderr);
  expect(agent.stderr.split("\n").slice(0, 6)).toEqual([
    `minikubelet: pid           ${agent.pid}`,
    `minikubelet: database      ${ws.db}`,
    "minikubelet: runtime       process",
    `minikubelet: runtime root  ${join(ws.path, "process")}`,
    "minikubelet: node          n1",
    "minikubelet: api           off",
  ]);
});
