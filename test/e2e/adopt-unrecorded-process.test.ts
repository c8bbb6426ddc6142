/**
 * Issue 11 end to end, process runtime, compiled binary: `kill -9` of the agent the moment it
 * prints `Started`, before that pass is checkpointed; the container exits while no agent runs; a
 * new agent takes the attempt over. A Never container ran exactly once, an OnFailure container
 * that exited 0 is not run again, and a crash loop keeps every run (exit code, log, restart count).
 * Each run appends a line to a file outside the agent's reach, so a second run cannot hide.
 */
import { test } from "bun:test";
import { processE2E, processContainers, Workspace } from "./helpers.ts";
import { crashLoopKeepsEveryRun, runsOnce, type Scenario } from "./unrecorded-scenarios.ts";

const e2e = processE2E();

const scenario: Scenario = {
  namespace: "e2e",
  image: "busybox",
  extraArgs: [],
  track: (agent) => e2e.agents.push(agent),
  allExited: (ws) => {
    const containers = processContainers(ws).filter((c) => c.name === "main");
    return containers.length > 0 && containers.every((c) => c.exited);
  },
};

test("restartPolicy Never: killed at Started, exited while down, ran exactly once", async () => {
  await runsOnce((e2e.ws = new Workspace()), scenario, { restartPolicy: "Never", exitCode: 3, phase: "Failed" });
}, 40_000);

test("restartPolicy OnFailure, exit 0: killed at Started, exited while down, not run again", async () => {
  await runsOnce((e2e.ws = new Workspace()), scenario, { restartPolicy: "OnFailure", exitCode: 0, phase: "Succeeded" });
}, 40_000);

test("crash loop: killed at a restart's Started, every run keeps its exit code, log and count", async () => {
  await crashLoopKeepsEveryRun((e2e.ws = new Workspace()), scenario);
}, 60_000);
