/**
 * Issue 14, with the compiled binary on this host's cgroups: a container over its 16Mi memory limit
 * is killed by the kernel and recorded as OOMKilled (exit 137, kill_cause oom) in `get pods` and the attempts table;
 * its cgroups are gone once its pod is.
 */
import { expect } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { detectHostCgroupMode } from "../../src/runtime/process/cgroups.ts";
import { hostCgroupsMissing } from "../host-cgroups.ts";
import { testNeeding } from "../requirements.ts";
import { Agent, podTable, processE2E, Workspace, waitFor } from "./helpers.ts";

const e2e = processE2E();
const mode = detectHostCgroupMode();
const memoryRoot = mode.kind === "v1" ? mode.memory : mode.kind === "v2" ? mode.root : "";

function hog(name: string, restartPolicy: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: oom}
spec:
  restartPolicy: ${restartPolicy}
  containers:
    - name: hog
      image: busybox
      command: [python3, -c, "x = bytearray(200 * 1024 * 1024)"]
      resources: {limits: {memory: 16Mi}}
`;
}

/** Every container cgroup under minikubelet/, by its name (the container id). */
function containerCgroups(): string[] {
  const parent = join(memoryRoot, "minikubelet");
  if (!existsSync(parent)) return [];
  return readdirSync(parent, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((owner) => readdirSync(join(parent, owner.name), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name));
}

testNeeding("a container over its memory limit is OOMKilled, restarted under Always and shown OOMKilled through its back-off; its cgroup goes with its pod", hostCgroupsMissing(), async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("once.yaml", hog("once", "Never"));
  ws.write("again.yaml", hog("again", "Always"));
  const agent = new Agent(ws);
  e2e.agents.push(agent);
  await waitFor(
    "OOMKilled in get pods, the restarted one's second kill while its back-off runs",
    () => {
      const table = podTable(ws, "oom");
      return table["once-n1"]?.[1] === "OOMKilled" && table["again-n1"]?.[1] === "OOMKilled" && Number(table["again-n1"]?.[2]) >= 2;
    },
    20_000,
    () => ws.cli("get", "pods", "-n", "oom") + agent.stdout + agent.stderr,
  );
  const attempts = ws.query<{ exit_code: number; reason: string; kill_cause: string | null }>("SELECT exit_code, reason, kill_cause FROM attempts WHERE finished_at IS NOT NULL");
  expect(attempts.length).toBeGreaterThanOrEqual(3);
  for (const attempt of attempts) expect([attempt.exit_code, attempt.reason, attempt.kill_cause]).toEqual([137, "OOMKilled", "oom"]);
  // The agent prints an event after committing it: its line may still be on the way when the rows are read.
  await agent.waitForOutput("Container hog exited with code 137 (OOMKilled)", 10_000);
  const ids = ws.query<{ runtime_id: string }>("SELECT runtime_id FROM attempts").map((row) => row.runtime_id);
  expect(containerCgroups().some((name) => ids.includes(name))).toBe(true);

  ws.remove("once.yaml");
  ws.remove("again.yaml");
  await waitFor("both pods removed", () => ws.cli("get", "pods", "-n", "oom").trim() === "" || !/n1/.test(ws.cli("get", "pods", "-n", "oom")), 20_000);
  await waitFor("their cgroups removed", () => !containerCgroups().some((name) => ids.includes(name)), 10_000, () => containerCgroups().join("\n"));
}, 60_000);
