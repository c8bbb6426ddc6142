/**
 * Issue 14, compiled binary, process runtime, this host's real filesystem: an --eviction-hard
 * threshold above the free space puts the node under DiskPressure. A pod already running keeps
 * running (adopted, never stopped); a new pod waits Pending with the node events said; an agent
 * started with a threshold below the free space clears the pressure and the waiting pod starts.
 */
import { expect, test } from "bun:test";
import { statfsSync } from "node:fs";
import { processE2E, Agent, e2ePodManifest, podTable, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

test("a threshold above the real free space: DiskPressure, new pods wait, running ones stay; below it: they start", async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("early.yaml", e2ePodManifest("early"));
  const first = new Agent(ws);
  e2e.agents.push(first);
  await waitFor("early running", () => podTable(ws, "e2e")["early-n1"]?.[1] === "Running", 15_000, () => first.stdout + first.stderr);
  await first.terminate();

  // More than the whole filesystem must stay free: whatever else writes meanwhile, this is pressure.
  const fs = statfsSync(ws.path, { bigint: true });
  const aboveEverything = String(fs.blocks * fs.bsize + 1n);
  const pressured = new Agent(ws, ["--eviction-hard", `nodefs.available<${aboveEverything}`]);
  e2e.agents.push(pressured);
  await pressured.waitForOutput("Warning EvictionThresholdMet default/n1: Attempting to reclaim ephemeral-storage");
  expect(pressured.stdout).toContain("Normal NodeHasDiskPressure default/n1: Node n1 status is now: NodeHasDiskPressure");
  expect(pressured.stderr).toContain("minikubelet: disk pressure: ");
  await pressured.waitForOutput("Adopted running container main");
  ws.write("late.yaml", e2ePodManifest("late"));
  await pressured.waitForOutput("Warning FailedScheduling e2e/late-n1: 0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }.");
  // A moment later it still waits, and the running pod was never touched.
  await new Promise((done) => setTimeout(done, 1500));
  expect(podTable(ws, "e2e")).toEqual({ "early-n1": ["1/1", "Running", "0"], "late-n1": ["0/1", "Pending", "0"] });
  expect(pressured.stdout).not.toContain("Killing");
  expect(ws.query("SELECT disk_pressure FROM node_status")).toEqual([{ disk_pressure: 1 }]);
  const described = ws.cli("describe", "pod", "late-n1", "-n", "e2e");
  expect(described).toMatch(/Status:\s+Pending\n/);
  expect(described).toMatch(/PodScheduled\s+False/);
  await pressured.terminate();

  const relieved = new Agent(ws, ["--eviction-hard", "nodefs.available<1Ki"]);
  e2e.agents.push(relieved);
  await relieved.waitForOutput("Normal NodeHasNoDiskPressure default/n1: Node n1 status is now: NodeHasNoDiskPressure");
  await waitFor("late running", () => podTable(ws, "e2e")["late-n1"]?.[1] === "Running", 15_000, () => relieved.stdout + relieved.stderr);
  expect(podTable(ws, "e2e")["early-n1"]).toEqual(["1/1", "Running", "0"]);
  expect(ws.query("SELECT disk_pressure FROM node_status")).toEqual([{ disk_pressure: 0 }]);
});
