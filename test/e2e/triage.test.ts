/**
 * `triage` with the compiled binary on the demo's crash pod (examples/crash.json), run by a real
 * agent on the process runtime: the verdict, the crashed attempt's own output and the back-off
 * come from the database and log files the agent wrote.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, processContainers, processE2E, ROOT, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

test("triage explains the demo's crash pod: exit 1 from the program itself, its last output, when it restarts", async () => {
  const workspace = (e2e.ws = new Workspace());
  workspace.write("crash.json", readFileSync(join(ROOT, "examples/crash.json"), "utf8"));
  const agent = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "8"], { node: "lab" });
  e2e.agents.push(agent);
  await agent.waitForOutput("BackOff default/crash-lab crash", 20_000);

  const text = await waitFor("a report on a crash in back-off", () => {
    // No --backoff-max: the agent recorded the back-off it runs with.
    const result = workspace.run("triage", "crash-lab");
    // Its exit is the state shown while the back-off runs (CrashLoopBackOff shows only for the pass at its end).
    return result.status === 0 && result.stdout.includes("Next start allowed at") && result.stdout.includes("STATUS Error") ? result.stdout : undefined;
  }, 20_000);
  expect(text).toStartWith("Pod:        default/crash-lab (phase Running, STATUS Error, restartPolicy Always)\n");
  expect(text).toContain("Verdict:\n  Application error: the program exited with code 1 after ");
  expect(text).toContain("  A crash, not a probe: no Killing event between its start and its exit, so nothing of ours stopped it.\n");
  expect(text).toMatch(/^ {24}log of attempt \d+ \| crashing$/m);
  expect(text).toContain("The back-off resets after 16s of clean running (2 x cap 8s, as the agent ran)");
  expect(text).toMatch(new RegExp(`^  1\\. minikubelet logs crash-lab -n default -c crash --db ${workspace.db}$`, "m"));

  const report = JSON.parse(workspace.cli("triage", "crash-lab", "-o", "json"));
  expect(report.verdict).toMatchObject({ cause: "app-error", endedBy: "itself" });
  const previous = workspace.cli("logs", "crash-lab", "--previous");
  expect(previous).toBe("crashing\n");
}, 60_000);

const PROBED = `apiVersion: v1
kind: Pod
metadata: {name: probed, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 5
  containers:
    - name: server
      image: busybox
      command: ["sleep", "600"]
      livenessProbe:
        exec: {command: ["sh", "-c", "exit 1"]}
        periodSeconds: 1
        failureThreshold: 2
`;

const VICTIM = `apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: e2e}
spec:
  containers:
    - name: worker
      image: busybox
      command: ["sleep", "600"]
`;

test("real processes: a liveness kill the process honoured (143) and a kill -9 from outside (137) are told apart", async () => {
  const workspace = (e2e.ws = new Workspace());
  workspace.write("probed.yaml", PROBED);
  workspace.write("victim.yaml", VICTIM);
  const agent = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "8"]);
  e2e.agents.push(agent);
  const worker = await waitFor("the worker running", () => processContainers(workspace).find((c) => c.name === "worker" && c.pid !== undefined && !c.exited), 15_000);
  process.kill(worker.pid!, "SIGKILL");
  await agent.waitForOutput("Killing e2e/probed-n1 server: Container server failed liveness probe", 20_000);
  await waitFor("both restarted", () => processContainers(workspace).filter((c) => c.attempt >= 1).length >= 2, 20_000, () => agent.stdout);

  const victim = JSON.parse(workspace.cli("triage", "victim-n1", "-o", "json"));
  expect(victim.exit).toMatchObject({ exitCode: 137 });
  expect(victim.verdict).toMatchObject({ cause: "outside-sigkill", endedBy: "outside" });
  const probed = JSON.parse(workspace.cli("triage", "probed-n1", "-o", "json"));
  expect(probed.exit).toMatchObject({ exitCode: 143 });
  expect(probed.verdict).toMatchObject({ cause: "liveness-kill", endedBy: "probe" });
  expect(probed.verdict.summary).toContain("it honoured SIGTERM (exit 143)");
}, 60_000);
