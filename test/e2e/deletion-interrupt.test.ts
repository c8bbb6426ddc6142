/**
 * Issue 26, real processes, compiled binary: a manifest removed while its pod's first sync is
 * starting 200 containers stops the starting at the next container, and everything started is
 * stopped. On the base the sync went on through every container before the removal was seen.
 */
import { expect, test } from "bun:test";
import { Agent, isRunning, processContainers, processE2E, processesMentioning, waitFor, Workspace } from "./helpers.ts";

const CONTAINERS = 200;
/** A removal seen at the next container lets one more start; more than a few is the sync going on. */
const STARTS_AFTER_REMOVAL = 3;

const e2e = processE2E();

function manyContainers(count: number): string {
  const containers = Array.from({ length: count }, (_, i) => `    - {name: c${i}, image: busybox, command: ["sleep", "600"]}`);
  return `apiVersion: v1
kind: Pod
metadata: {name: many, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 1
  containers:
${containers.join("\n")}
`;
}

test(`a manifest removed while ${CONTAINERS} containers start: starting stops at the next one, and all are stopped`, async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("many.yaml", manyContainers(CONTAINERS));
  const agent = new Agent(ws, []);
  e2e.agents.push(agent);
  await waitFor("ten containers started", () => processContainers(ws).length >= 10, 30_000, () => agent.stdout + agent.stderr);
  ws.remove("many.yaml");
  const atRemoval = processContainers(ws).length;
  await waitFor(
    "the pod removed and its processes gone",
    () => ws.query("SELECT 1 FROM pods WHERE deleted_at IS NULL").length === 0 && processContainers(ws).every((c) => c.pid === undefined || !isRunning(c.pid)),
    30_000,
    () => agent.stdout.slice(-2000) + agent.stderr,
  );
  const started = agent.stdout.split("\n").filter((line) => / Normal Started e2e\/many-n1 /.test(line)).length;
  expect(started).toBeLessThan(CONTAINERS);
  // The agent's own count of starts against what had been created when the file went.
  expect(started - atRemoval).toBeLessThanOrEqual(STARTS_AFTER_REMOVAL);
  expect(processesMentioning(ws.path).filter((p) => p.pid !== agent.pid)).toEqual([]);
}, 90_000);
