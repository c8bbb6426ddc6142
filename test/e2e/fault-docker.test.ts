/**
 * Issue 26: the kill -9 churn of fault-churn.ts on the docker runtime, compiled binary,
 * FAULT_ROUNDS kill -9s (default 20). The runtime is read off the engine: the pods' namespace is
 * the run's own, a container ran once the engine started it, and a stray is anything of the
 * namespace running outside the live pods' containers and their one sandbox each.
 */
import { afterAll, beforeAll, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { runChurn, type ChurnRuntime } from "./fault-churn.ts";
import { Agent, ensureBinary, Workspace } from "./helpers.ts";

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 20);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`FAULT_ROUNDS must be a whole number above 0 (got ${process.env.FAULT_ROUNDS})`);

const NS = `fault-${randomBytes(3).toString("hex")}`;

async function namespaceContainers() {
  return docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } });
}

const dockerRuntime: ChurnRuntime = {
  flags: ["--runtime", "docker"],
  namespace: NS,
  imageLines: `      image: ${BUSYBOX}\n      imagePullPolicy: Never`,
  // An engine's create and start take longer than a fork: the events come later.
  eventWaitMs: 4000,
  settleMs: 40_000,
  async containers() {
    return (await namespaceContainers())
      .filter((c) => c.Labels[LABEL.sandbox] === "false")
      .map((c) => ({
        id: c.Id,
        podUid: c.Labels[LABEL.podUid] ?? "",
        podName: c.Labels[LABEL.podName] ?? "",
        name: c.Labels[LABEL.containerName] ?? "",
        attempt: Number(c.Labels[LABEL.attempt] ?? -1),
        ran: c.State !== "created",
        running: c.State === "running",
      }));
  },
  async strays(_ws, liveUids, running) {
    const runningIds = new Set(running.map((c) => c.id));
    const sandboxes = new Map<string, number>();
    const strays: string[] = [];
    for (const c of await namespaceContainers()) {
      if (c.State !== "running") continue;
      const uid = c.Labels[LABEL.podUid] ?? "";
      const what = `${c.Names.join(",")} (${c.Id.slice(0, 12)})`;
      if (!liveUids.has(uid)) strays.push(`${what}: its pod is not live`);
      else if (c.Labels[LABEL.sandbox] === "true") sandboxes.set(uid, (sandboxes.get(uid) ?? 0) + 1);
      else if (!runningIds.has(c.Id)) strays.push(`${what}: not a container the runtime lists`);
    }
    for (const [uid, count] of sandboxes) if (count > 1) strays.push(`pod ${uid}: ${count} sandboxes running`);
    return strays;
  },
  async leftovers() {
    return (await namespaceContainers()).filter((c) => c.State === "running").map((c) => c.Names.join(","));
  },
};

describeDocker("kill -9 churn, docker runtime (compiled binary)", () => {
  let ws: Workspace | undefined;
  const agents: Agent[] = [];

  beforeAll(() => {
    ensureBinary();
  });

  afterAll(async () => {
    for (const agent of agents.splice(0)) await agent.terminate();
    await Promise.all((await namespaceContainers()).map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    ws?.cleanup();
  });

  test(`${ROUNDS} kill -9s during churn: no duplicates, no orphans, no attempt twice, counts match attempts, database intact`, async () => {
    await runChurn(dockerRuntime, (ws = new Workspace()), ROUNDS, agents);
  }, 90_000 + ROUNDS * 7000);
});
