/**
 * Issue 11, compiled binary, process runtime: SIGTERM of `run` stopped and deleted every pod (a
 * kubelet restart never stops workloads). Now the pods keep running and the next agent adopts them
 * as after kill -9; `--stop-pods-on-exit` stops them. Once no agent runs, `get` and `describe` say
 * so, and after a stop `describe` and `logs` tell what happened instead of "Terminating (lasts
 * ...)" and an ENOENT blamed on retention.
 */
import { expect, test } from "bun:test";
import { Agent, isRunning, processContainers, processE2E, processesMentioning, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

const WEB = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: web
      image: busybox
      command: ["sh", "-c", "echo serving; exec sleep 600"]
`;

const CRASH = `apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: crash
      image: busybox
      command: ["sh", "-c", "echo crashing; exit 1"]
`;

test("SIGTERM leaves the pods running for the next agent; --stop-pods-on-exit stops them; the record tells the truth after", async () => {
  const workspace = (e2e.ws = new Workspace());
  workspace.write("web.yaml", WEB);
  workspace.write("crash.yaml", CRASH);
  const first = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "2"]);
  e2e.agents.push(first);
  const webPid = await waitFor("web running and crash restarted", () => {
    const up = processContainers(workspace);
    const web = up.find((c) => c.name === "web" && c.pid !== undefined && !c.exited);
    return web && up.some((c) => c.name === "crash" && c.attempt >= 1) ? web.pid : undefined;
  }, 15_000, () => first.stdout + first.stderr);

  expect(await first.terminate()).toBe(0);
  e2e.agents.pop();
  expect(first.stderr).toContain("pods left running for the next agent to adopt; --stop-pods-on-exit stops them");
  expect(first.stdout).not.toContain("Killing");
  expect(isRunning(webPid!)).toBe(true);

  // No agent: the rows are the last checkpoint, and get/describe say so on stderr.
  const get = workspace.run("get", "pods", "-n", "e2e");
  expect(get.status).toBe(0);
  expect(get.stderr).toMatch(/^agent not running, last update \d+s ago\n$/);
  expect(get.stdout).toMatch(/\nweb-n1 +1\/1 +Running +0 /);
  expect(workspace.run("describe", "pod", "web-n1", "-n", "e2e").stderr).toMatch(/^agent not running, last update \d+s ago\n$/);

  // The next agent adopts the same process, as after kill -9.
  const second = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "2", "--stop-pods-on-exit"]);
  e2e.agents.push(second);
  await second.waitForOutput("Adopted running container web");
  expect(processContainers(workspace).find((c) => c.name === "web" && !c.exited)?.pid).toBe(webPid);
  expect(second.stdout).not.toMatch(/Started e2e\/web-n1/);
  expect(workspace.run("get", "pods", "-n", "e2e").stderr).toBe("");

  // --stop-pods-on-exit: stopped and removed, nothing left running.
  expect(await second.terminate()).toBe(0);
  e2e.agents.pop();
  expect(second.stdout).toContain("Killing e2e/web-n1 web: Stopping container web");
  expect(isRunning(webPid!)).toBe(false);
  expect(processesMentioning(workspace.path)).toEqual([]);

  const describe = workspace.run("describe", "pod", "web-n1", "-n", "e2e");
  expect(describe.status).toBe(0);
  expect(describe.stdout).not.toContain("Terminating");
  expect(describe.stdout).toMatch(/\nDeleted: +.+ \(\d+s ago, stopped when the agent exited with --stop-pods-on-exit\)\n/);
  for (const args of [["web-n1"], ["crash-n1", "--previous"]]) {
    const logs = workspace.run("logs", ...args, "-n", "e2e");
    expect(logs.status).toBe(1);
    expect(logs.stderr).toMatch(/was deleted \d+s ago \(stopped when the agent exited with --stop-pods-on-exit\), and its containers' logs with it\n$/);
    expect(logs.stderr).not.toContain("ENOENT");
  }
}, 60_000);
