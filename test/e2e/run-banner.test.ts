/** `run` says at start which agent it is: pid, database, runtime and its root (and records), node, API and kubelet server addresses. */
import { expect, test } from "bun:test";
import { isAbsolute } from "node:path";
import { Agent, Workspace, processContainers, processE2E, processLayoutOf, processesMentioning, waitFor } from "./helpers.ts";

const e2e = processE2E();

test("run prints its pid, database, runtime, runtime root, node, API and kubelet server addresses before the first event", async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("sleeper.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: sleeper}\nspec:\n  containers:\n    - {name: sleeper, image: busybox, command: [sleep, '60']}\n");
  const agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--kubelet-listen", "127.0.0.1:0"]);
  e2e.agents.push(agent);
  await waitFor("the start banner", () => agent.stderr.includes("minikubelet: kubelet"), 10_000, () => agent.stderr);
  // The records' own line only where they are apart from the root (on a tmpfs: this host has /dev/shm).
  const layout = processLayoutOf(ws.db);
  const labels = ["pid", "database", "runtime", "runtime root", ...(layout.stateDir === layout.rootDir ? [] : ["runtime state"]), "node", "api", "kubelet"];
  const banner = agent.stderr.split("\n").slice(0, labels.length);
  expect(banner.map((line) => line.replace(/^minikubelet: (\S+(?: root| state)?) +.*$/, "$1"))).toEqual(labels);
  const value = (label: string) => banner.find((line) => line.startsWith(`minikubelet: ${label} `))!.slice(`minikubelet: ${label}`.length).trim();
  expect(value("pid")).toBe(String(agent.pid));
  expect(value("database")).toBe(ws.db);
  expect(value("runtime")).toBe("process");
  expect(value("node")).toBe("n1");
  // The address a client dials: the port the system picked for :0, not 0.
  expect(value("api")).toMatch(/^https:\/\/127\.0\.0\.1:[1-9]\d*$/);
  expect(value("kubelet")).toMatch(/^https:\/\/127\.0\.0\.1:[1-9]\d*$/);
  expect(value("kubelet")).not.toBe(value("api"));
  // The root named is where this agent's containers really are: their monitors run from it.
  const root = value("runtime root");
  expect(isAbsolute(root) && root !== "/").toBe(true);
  await agent.waitForOutput("Started default/sleeper-n1 sleeper", 10_000);
  expect(processesMentioning(root).length).toBeGreaterThan(0);
  // The records named are this agent's: its container's pid file is there.
  if (layout.stateDir !== layout.rootDir) {
    expect(value("runtime state")).toBe(layout.stateDir);
    expect(processContainers(ws).map((c) => c.pid !== undefined)).toEqual([true]);
  }
  expect(agent.stdout).not.toContain("minikubelet: pid");
});
