/**
 * Issue 7 end to end, process runtime, compiled binary: `kill -9` of the agent and a new agent on
 * the same database adopt what runs. Same container pids, same restart counts and readiness (no
 * flap), the crash loop's back-off continues where it was, events from before the kill are kept,
 * and a SIGTERM at the end (with --stop-pods-on-exit) stops every process the pods started.
 */
import { expect, test } from "bun:test";
import {
  processE2E,
  Agent,
  attemptRows,
  backoffDelay,
  containerRows,
  eventRows,
  freePort,
  isRunning,
  podTable,
  processContainers,
  processesMentioning,
  waitFor,
  Workspace,
} from "./helpers.ts";

// Base 2 puts the third restart's wait at 8 s, which leaves a new agent on a loaded machine (a
// compiled binary starting beside other suites) seconds to adopt before that wait ends.
const BACKOFF = ["--backoff-base", "2", "--backoff-max", "16"];

const e2e = processE2E();

function webManifest(port: number, docroot: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: web
      image: python
      command: ["python3", "-m", "http.server", "${port}", "--bind", "127.0.0.1", "--directory", "${docroot}"]
      readinessProbe:
        httpGet: {path: /, port: ${port}}
        periodSeconds: 1
`;
}

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

test("kill -9 of the agent: the next one adopts pids, counts, readiness, back-off and events", async () => {
  const workspace = (e2e.ws = new Workspace());
  const port = await freePort();
  workspace.write("web.yaml", webManifest(port, workspace.path));
  workspace.write("crash.yaml", CRASH);
  const first = new Agent(workspace, BACKOFF);
  e2e.agents.push(first);

  const containers = () => containerRows(workspace);
  const attempts = (container: string) => attemptRows(workspace, container);
  const delayOf = () => backoffDelay(workspace, "crash");

  // Web ready, and the crash loop three restarts in, its exit shown while it waits out its 8s back-off with time to spare.
  await waitFor(
    "web ready and crash in its 8s back-off",
    () => {
      const [crash, web] = containers();
      // The exit is shown through the wait (terminated), CrashLoopBackOff (waiting) after any later pass in it.
      if (!web?.ready || (crash?.state !== "terminated" && crash?.state !== "waiting") || crash.restart_count !== 3 || delayOf() !== 8000) return false;
      const finished = attempts("crash")[3]?.finished_at;
      return finished != null && finished + 8000 - Date.now() > 5000;
    },
    25_000,
    () => JSON.stringify(containers()) + first.stdout,
  );
  // The pass that met the exit shows it (Error); a later pass in the wait shows CrashLoopBackOff, as on a kubelet node.
  const table = podTable(workspace, "e2e");
  expect(table["web-n1"]).toEqual(["1/1", "Running", "0"]);
  expect(table["crash-n1"]?.[0]).toBe("0/1");
  expect(["Error", "CrashLoopBackOff"]).toContain(table["crash-n1"]?.[1] ?? "");
  expect(table["crash-n1"]?.[2]).toBe("3");
  const before = { containers: containers(), web: attempts("web"), crash: attempts("crash"), events: eventRows(workspace) };
  const webPid = processContainers(workspace).find((c) => c.name === "web")?.pid;
  expect(webPid && isRunning(webPid)).toBe(true);

  await first.kill9();
  expect(isRunning(webPid!)).toBe(true);
  const second = new Agent(workspace, [...BACKOFF, "--stop-pods-on-exit"]);
  e2e.agents.push(second);
  await second.waitForOutput("Adopted running container web");
  // The new agent's first checkpoint: web is still 1/1 with no restart, crash still at 3 and backing off
  // (its pass during the wait shows the back-off, as any pass after the one that met the exit).
  await waitFor("the adopted pods checkpointed", () => workspace.query("SELECT 1 FROM events WHERE reason = 'Adopted'").length > 0);
  expect(podTable(workspace, "e2e")).toEqual({ "crash-n1": ["0/1", "CrashLoopBackOff", "3"], "web-n1": ["1/1", "Running", "0"] });

  // Until the next crash restart, web never leaves 1/1 (sampled at every poll).
  const crashStarted = await waitFor(
    "the crash loop's fourth restart",
    () => {
      const web = containers()[1];
      if (!web?.ready) throw new Error(`web went not ready after adoption: ${JSON.stringify(web)}`);
      const row = attempts("crash")[4];
      return row?.started_at ?? undefined;
    },
    15_000,
    () => second.stdout + second.stderr,
  );
  // The wait continued from the crash before the kill: finish + 8s, not at once and not a fresh base wait.
  const finished = before.crash[3]!.finished_at!;
  expect(crashStarted - (finished + 8000)).toBeGreaterThanOrEqual(-50);
  expect(crashStarted - (finished + 8000)).toBeLessThan(1000);
  expect(crashStarted - second.startedAt).toBeGreaterThan(1000);

  // Same web process, same attempt, same id; the crash attempts before the kill are untouched.
  expect(isRunning(webPid!)).toBe(true);
  expect(processContainers(workspace).find((c) => c.name === "web")?.pid).toBe(webPid);
  expect(attempts("web")).toEqual(before.web);
  expect(attempts("crash").slice(0, 4)).toEqual(before.crash);
  expect(containers()[1]?.container_id).toBe(before.containers[1]!.container_id);
  // No readiness flip, no new start of web in the new agent's output.
  expect(second.stdout.split("\n").filter((line) => line.includes("e2e/web-n1"))).toEqual([
    expect.stringContaining("Normal Adopted e2e/web-n1 web: Adopted running container web"),
  ]);

  // Every event from before the kill is still there, with at least its count.
  const after = eventRows(workspace);
  for (const event of before.events) {
    expect(after.find((e) => e.pod === event.pod && e.reason === event.reason && e.message === event.message && e.first_at === event.first_at && e.count >= event.count)).toBeDefined();
  }
  const printed = workspace.cli("events");
  expect(printed).toContain("Started container web");
  expect(printed).toContain("Back-off restarting failed container crash in pod crash-n1");

  // SIGTERM with --stop-pods-on-exit: the pods are stopped, and nothing they started is left.
  expect(await second.terminate()).toBe(0);
  expect(isRunning(webPid!)).toBe(false);
  expect(processesMentioning(workspace.path)).toEqual([]);
  expect(processContainers(workspace).filter((c) => c.pid !== undefined && isRunning(c.pid))).toEqual([]);
}, 60_000);
