/**
 * Issue 14, compiled binary, process runtime: a pod requesting more CPU than this machine has is
 * refused at admission with the kubelet's OutOfcpu, in `get pods`, `describe` and the agent's
 * events, while a pod that fits runs; after a kill -9 and restart the refusal and the running pod
 * are adopted as they were, nothing admitted again.
 */
import { expect, test } from "bun:test";
import { cpus } from "node:os";
import { processE2E, Agent, e2ePodManifest, podTable, SLEEP_COMMAND, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

function requesting(name: string, cpu: string): string {
  return e2ePodManifest(name, `${SLEEP_COMMAND}
      resources:
        requests: {cpu: "${cpu}"}`);
}

test("a pod requesting more CPU than the machine has is refused with OutOfcpu; one that fits runs", async () => {
  const ws = (e2e.ws = new Workspace());
  const capacityMillis = cpus().length * 1000;
  ws.write("small.yaml", requesting("small", "100m"));
  ws.write("hog.yaml", requesting("hog", String(cpus().length + 1)));
  const agent = new Agent(ws);
  e2e.agents.push(agent);

  await waitFor("small running and hog refused", () => {
    const table = podTable(ws, "e2e");
    return table["small-n1"]?.[1] === "Running" && table["hog-n1"]?.[1] === "OutOfcpu" && table;
  }, 15_000, () => agent.stdout + agent.stderr);
  expect(podTable(ws, "e2e")["hog-n1"]).toEqual(["0/1", "OutOfcpu", "0"]);
  await agent.waitForOutput("Warning OutOfcpu e2e/hog-n1: ");
  // Either pod may be admitted first; the refusal counts whatever was admitted before it.
  const used = /OutOfcpu e2e\/hog-n1: .*used: (\d+),/.exec(agent.stdout)?.[1];
  expect(["0", "100"]).toContain(used!);
  const message = `Node didn't have enough resource: cpu, requested: ${capacityMillis + 1000}, used: ${used}, capacity: ${capacityMillis}`;
  expect(agent.stdout).toContain(`Warning OutOfcpu e2e/hog-n1: ${message}`);
  const described = ws.cli("describe", "pod", "hog-n1", "-n", "e2e");
  expect(described).toMatch(/Status:\s+Failed\n/);
  expect(described).toMatch(/Reason:\s+OutOfcpu\n/);
  expect(described).toContain(`Pod was rejected: ${message}`);
  expect(ws.query("SELECT count(*) AS attempts FROM attempts a JOIN pods p ON p.uid = a.pod_uid WHERE p.name = 'hog-n1'")).toEqual([{ attempts: 0 }]);

  // A restarted agent adopts both as they were: the running pod is not refused, the refused one stays so.
  await agent.kill9();
  const again = new Agent(ws);
  e2e.agents.push(again);
  await again.waitForOutput("Adopted running container main");
  await waitFor("both as before the restart", () => {
    const table = podTable(ws, "e2e");
    return table["small-n1"]?.[1] === "Running" && table["hog-n1"]?.[1] === "OutOfcpu" && table;
  }, 15_000, () => again.stdout + again.stderr);
  expect(again.stdout).not.toContain("OutOfcpu e2e/small-n1");
});
