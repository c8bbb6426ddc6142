/**
 * `kubectl top` against the compiled agent on each runtime: a busy loop near a whole core, an idle
 * `sleep` near nothing, both with a working set, and the node with its share of allocatable.
 * `--housekeeping-interval 1s` gives the collector its two readings within seconds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BUSYBOX, describeDocker } from "../docker/helpers.ts";
import { Agent, ensureBinary, Workspace, waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession } from "./harness.ts";

const MANIFEST = (image: string) => `apiVersion: v1
kind: Pod
metadata: {name: load, labels: {app: load}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: busy, image: ${image}, command: [sh, -c, 'while :; do :; done']}
    - {name: idle, image: ${image}, command: [sleep, '3600']}
`;

/** `kubectl top pod --containers` rows: POD NAME CPU(cores) MEMORY(bytes). */
function containerRows(stdout: string): Map<string, { cpuMillis: number; memory: string }> {
  const rows = new Map<string, { cpuMillis: number; memory: string }>();
  for (const line of stdout.trim().split("\n").slice(1)) {
    const [, name, cpu, memory] = line.trim().split(/\s+/);
    if (name && cpu && memory) rows.set(name, { cpuMillis: Number(cpu.replace(/m$/, "")), memory });
  }
  return rows;
}

function topTests(runtime: "process" | "docker", image: string): void {
  let ws: Workspace;
  let agent: Agent;
  let session: KubectlSession;
  const node = `top-${randomBytes(3).toString("hex")}`;
  const pod = `load-${node}`;

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    ws.write("load.yaml", MANIFEST(image));
    agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--runtime", runtime, "--stop-pods-on-exit", "--housekeeping-interval", "1s"], { node });
    await waitFor("both containers started", () => agent.stdout.includes(`Started default/${pod} busy`) && agent.stdout.includes(`Started default/${pod} idle`), 60_000, () => agent.stderr + agent.stdout);
    session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    session?.[Symbol.dispose]();
    ws?.cleanup();
  }, 60_000);

  for (const [label, binary] of KUBECTLS_UNDER_TEST) {
    describeWithKubectl(`kubectl top (${runtime} runtime, ${label})`, binary, (kubectl) => {
      test("top pod --containers: the busy loop near a core, the sleep near none", async () => {
        // A window of a few readings: the loop's rate settles once it has run a second or two.
        const rows = await waitFor(
          "both containers with figures",
          async () => {
            const result = await session.run(kubectl, ["top", "pod", pod, "--containers"]);
            const found = result.status === 0 ? containerRows(result.stdout) : undefined;
            return found?.has("busy") && found.has("idle") && found.get("busy")!.cpuMillis > 300 ? found : undefined;
          },
          30_000,
          () => agent.stderr,
        );
        // Two cores shared with other tests: the loop gets most of one, never more.
        expect(rows.get("busy")!.cpuMillis).toBeGreaterThan(300);
        expect(rows.get("busy")!.cpuMillis).toBeLessThan(1100);
        expect(rows.get("idle")!.cpuMillis).toBeLessThan(50);
        for (const { memory } of rows.values()) expect(memory).toMatch(/^\d+Mi$/);
      }, 60_000);

      test("top pod -A and -l list the pod; top node shows the node's usage against allocatable", async () => {
        const all = await session.run(kubectl, ["top", "pod", "-A", "-l", "app=load"]);
        expect(all.status).toBe(0);
        expect(all.stdout).toMatch(new RegExp(`^NAMESPACE\\s+NAME\\s+CPU\\(cores\\)\\s+MEMORY\\(bytes\\)\\s*\\ndefault\\s+${pod}\\s+\\d+m\\s+\\d+Mi\\s*\\n$`));
        const none = await session.run(kubectl, ["top", "pod", "-l", "app=other"]);
        expect(none.stderr).toContain("No resources found in default namespace.");
        const top = await session.run(kubectl, ["top", "node"]);
        expect(top.status).toBe(0);
        const [header, row] = top.stdout.trim().split("\n");
        expect(header).toMatch(/^NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)/);
        const [name, cpu, cpuPercent, memory] = row!.trim().split(/\s+/);
        expect(name).toBe(node);
        // The busy loop alone is over 300m of the node.
        expect(Number(cpu!.replace(/m$/, ""))).toBeGreaterThan(300);
        expect(cpuPercent).toMatch(/^\d+%$/);
        expect(memory).toMatch(/^\d+Mi$/);
      }, 60_000);
    });
  }
}

describe("run --runtime process", () => topTests("process", "busybox"));
describeDocker("run --runtime docker", () => topTests("docker", BUSYBOX));
