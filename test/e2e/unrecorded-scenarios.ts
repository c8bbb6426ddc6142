/**
 * The "never twice" scenarios of issue 11, shared by the process and docker e2e files: the agent
 * is `kill -9`'d the moment it prints `Started`, while the test holds the database's write lock so
 * that pass cannot be checkpointed first (without the lock the kill wins that race about one time
 * in three); the container exits with no agent running; a new agent must take the attempt over.
 * Every run appends `run N` to a marker file on the host, so a second run cannot hide.
 */
import { Database } from "bun:sqlite";
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, attemptRows, containerRows, waitFor, type Workspace } from "./helpers.ts";

export interface Scenario {
  /** The pods' namespace (docker runs use one of their own). */
  namespace: string;
  image: string;
  /** Extra `run` flags (the runtime). */
  extraArgs: string[];
  /** Registers an agent for the file's cleanup. */
  track: (agent: Agent) => void;
  /** True once every attempt of the container `main` has exited in the runtime. */
  allExited: (ws: Workspace) => boolean | Promise<boolean>;
  /** Extra manifest lines for the container (docker: mount the marker's directory). */
  markerMount?: (dir: string) => { volumes: string; mounts: string };
}

const CANARY = (s: Scenario) => `apiVersion: v1
kind: Pod
metadata: {name: canary, namespace: ${s.namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: canary, image: ${s.image}, imagePullPolicy: IfNotPresent, command: ["sh", "-c", "exec sleep 1000"]}
`;

/** A pod whose container `main` appends `run N` to the marker, prints it, runs `seconds` and exits `code`. */
function manifest(s: Scenario, ws: Workspace, name: string, restartPolicy: string, code: number, seconds: number): string {
  const dir = s.markerMount ? "/marker" : ws.path;
  const marker = `${dir}/runs`;
  const script = `n=$(cat ${marker} 2>/dev/null | wc -l); echo "run $n" >> ${marker}; echo "run $n"; sleep ${seconds}; exit ${code}`;
  const mount = s.markerMount?.(ws.path);
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${s.namespace}}
spec:
  restartPolicy: ${restartPolicy}
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${s.image}
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", ${JSON.stringify(script)}]
${mount?.mounts ?? ""}${mount?.volumes ?? ""}`;
}

export function runs(ws: Workspace): string[] {
  try {
    return readFileSync(join(ws.path, "runs"), "utf8").trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** Takes the database's write lock, as a checkpoint still in progress would hold the agent's pass back. */
function holdCheckpoints(ws: Workspace): () => void {
  const db = new Database(ws.db);
  db.run("PRAGMA busy_timeout = 5000");
  db.run("BEGIN IMMEDIATE");
  return () => {
    db.run("ROLLBACK");
    db.close();
  };
}

const phaseOf = (ws: Workspace, name: string) =>
  ws.query<{ phase: string; updated_at: number }>("SELECT phase, updated_at FROM pods WHERE name = ? AND deleted_at IS NULL", name).at(0);

/**
 * Kills `agent` at its next `Started` line for `pod` after `trigger()`, with checkpoints held back,
 * then waits until the container has exited with no agent running.
 */
async function killAtStarted(ws: Workspace, s: Scenario, agent: Agent, pod: string, trigger: () => void): Promise<void> {
  const release = holdCheckpoints(ws);
  try {
    const killed = agent.killOn(new RegExp(` Normal Started ${s.namespace}/${pod}-n1 main:`));
    trigger();
    const line = await killed;
    if (!line) console.log(`the agent exited before the Started line; its output:\n${agent.stdout}\n${agent.stderr}`);
    expect(line).toBeDefined();
  } finally {
    release();
  }
  await waitFor("the container to exit with no agent running", () => s.allExited(ws), 15_000);
}

/** Never / OnFailure-and-0: the attempt the dead agent did not record is recorded, and never run again. */
export async function runsOnce(ws: Workspace, s: Scenario, expected: { restartPolicy: string; exitCode: number; phase: string }): Promise<void> {
  ws.write("canary.yaml", CANARY(s));
  const first = new Agent(ws, s.extraArgs);
  s.track(first);
  await waitFor("the canary running", () => containerRows(ws).some((c) => c.name === "canary" && c.state === "running"), 15_000, () => first.stdout + first.stderr);
  await killAtStarted(ws, s, first, "job", () => ws.write("job.yaml", manifest(s, ws, "job", expected.restartPolicy, expected.exitCode, 1)));
  expect(phaseOf(ws, "job-n1")).toBeUndefined(); // the pod never reached the checkpoint
  expect(runs(ws)).toEqual(["run 0"]);

  const second = new Agent(ws, s.extraArgs);
  s.track(second);
  await waitFor(
    `the job's pod ${expected.phase}`,
    () => phaseOf(ws, "job-n1")?.phase === expected.phase,
    15_000,
    () => second.stdout + second.stderr,
  );
  expect(runs(ws)).toEqual(["run 0"]);
  expect(ws.query("SELECT attempt, exit_code FROM attempts WHERE container = 'main'")).toEqual([{ attempt: 0, exit_code: expected.exitCode }]);
  expect(containerRows(ws).filter((c) => c.name === "main").map((c) => [c.state, c.restart_count])).toEqual([["terminated", 0]]);
  expect(ws.cli("logs", "job-n1", "-n", s.namespace)).toBe("run 0\n");
  // The agent's stdout is a pipe: on a loaded machine its line may reach us after the database's row.
  await second.waitForOutput(`Normal Adopted ${s.namespace}/job-n1 main: Adopted container main`);
  expect(second.stdout).not.toContain(`Started ${s.namespace}/job-n1`);
}

/**
 * A crash loop killed at its first restart's `Started`: the checkpoint still has attempt 0 running.
 * Every run keeps its row and exit code, the killed-at run's output is the log shown through the
 * back-off, and the restart count follows the attempts with none used twice.
 */
export async function crashLoopKeepsEveryRun(ws: Workspace, s: Scenario): Promise<void> {
  ws.write("crash.yaml", manifest(s, ws, "crash", "Always", 1, 1));
  // A back-off long enough for the second agent to start and adopt on a loaded machine before it ends.
  const args = [...s.extraArgs, "--backoff-base", "8", "--backoff-max", "16"];
  const first = new Agent(ws, args);
  s.track(first);
  await waitFor("attempt 0 checkpointed", () => attemptRows(ws, "main").length === 1, 15_000, () => first.stdout + first.stderr);
  await killAtStarted(ws, s, first, "crash", () => {});
  expect(attemptRows(ws, "main").map((a) => [a.attempt, a.finished_at])).toEqual([[0, null]]);
  expect(runs(ws)).toEqual(["run 0", "run 1"]);

  const second = new Agent(ws, args);
  s.track(second);
  // Both runs recorded as ended; the second's exit is shown while it waits out its 8s back-off (as
  // the kubelet's status shows it until the wait ends): its output is the current log, the first's the previous.
  await waitFor(
    "both runs recorded and the back-off begun",
    () => attemptRows(ws, "main").filter((a) => a.finished_at !== null).length === 2 && containerRows(ws)[0]?.state === "terminated",
    15_000,
    () => second.stdout + second.stderr,
  );
  expect(ws.query("SELECT attempt, exit_code FROM attempts WHERE container = 'main' ORDER BY attempt")).toEqual([
    { attempt: 0, exit_code: 1 },
    { attempt: 1, exit_code: 1 },
  ]);
  expect(containerRows(ws)[0]).toMatchObject({ state: "terminated", restart_count: 1 });
  expect(ws.cli("logs", "crash-n1", "-n", s.namespace)).toBe("run 1\n");
  expect(ws.cli("logs", "crash-n1", "-n", s.namespace, "--previous")).toBe("run 0\n");
  expect(runs(ws)).toEqual(["run 0", "run 1"]);

  // The loop goes on from there: attempt 2 after the back-off, and no run without its attempt.
  await waitFor("attempt 2 ended", () => attemptRows(ws, "main")[2]?.finished_at, 30_000, () => second.stdout + second.stderr);
  const attempts = attemptRows(ws, "main").map((a) => a.attempt);
  expect(attempts).toEqual(attempts.map((_, i) => i));
  expect(runs(ws)).toEqual(attempts.map((a) => `run ${a}`));
  expect(containerRows(ws)[0]!.restart_count).toBe(attempts.at(-1)!);
}
