/**
 * Issue 11, compiled binary, process runtime: a manifest `run` cannot use is a row in `get pods`
 * with STATUS Invalid (not only a line on the agent's stderr) until the file is fixed; a running
 * pod whose file turns bad is stopped, and the event says so.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { processE2E, Agent, e2ePodManifest, podTable, SLEEP_COMMAND, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

// No command: the process runtime cannot start it, so the file is refused rather than retried as a StartError.
const NO_COMMAND = '      comand: ["sleep", "600"]';

test("an invalid file shows in get pods as Invalid, stops the pod it ran, and disappears when fixed", async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("bad.yaml", e2ePodManifest("bad", NO_COMMAND));
  ws.write("web.yaml", e2ePodManifest("web", SLEEP_COMMAND));
  const agent = new Agent(ws);
  e2e.agents.push(agent);

  await waitFor("web running and bad listed as Invalid", () => {
    const table = podTable(ws, "e2e");
    return table["web-n1"]?.[1] === "Running" && table["bad-n1"]?.[1] === "Invalid" && table;
  }, 15_000, () => agent.stdout + agent.stderr);
  expect(podTable(ws, "e2e")["bad-n1"]).toEqual(["0/0", "Invalid", "0"]);
  const badFile = join(ws.manifests, "bad.yaml");
  await agent.waitForOutput(`Warning Invalid e2e/bad-n1: manifest ${badFile} is invalid, not run until it is fixed: unknown field "spec.containers[0].comand"; spec.containers[0]: required: command or args`);
  expect(ws.cli("describe", "pod", "bad-n1", "-n", "e2e")).toContain(
    'Problems:\n  unknown field "spec.containers[0].comand"\n  spec.containers[0]: required: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)\n',
  );
  expect(ws.cli("events", "--for", "pod/bad-n1")).toContain("Invalid");

  // The running pod's file turns bad: the pod is removed, as the kubelet does, and the event says why.
  ws.write("web.yaml", e2ePodManifest("web", NO_COMMAND));
  await waitFor("web stopped and listed as Invalid", () => {
    const table = podTable(ws, "e2e");
    return table["web-n1"]?.[1] === "Invalid" && table;
  }, 15_000, () => agent.stdout + agent.stderr);
  await agent.waitForOutput(`PodRemoved e2e/web-n1: Stopped pod web-n1: its manifest ${join(ws.manifests, "web.yaml")} turned invalid`);
  await agent.waitForOutput("pod e2e/web-n1, which ran from it, is stopped as when its file is removed");

  ws.write("bad.yaml", e2ePodManifest("bad", SLEEP_COMMAND));
  await waitFor("bad fixed and running", () => {
    const table = podTable(ws, "e2e");
    return table["bad-n1"]?.[1] === "Running" && table;
  }, 15_000, () => agent.stdout + agent.stderr);
  expect(ws.query("SELECT name FROM invalid_manifests")).toEqual([{ name: "web-n1" }]);
});
