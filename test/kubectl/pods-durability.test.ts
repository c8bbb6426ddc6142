/**
 * An acknowledged create is never lost (issue 13): `kill -9` of the agent in the middle of a burst
 * of `kubectl create`s, then a restart on the same database. Every pod kubectl reported created is
 * there and Running, each started once (adopted, not started again), and no pod is there twice.
 */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, ensureBinary, Workspace, waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

const PODS = 50;
const IN_FLIGHT = 5;
/** The kill comes once this many creates were acknowledged: the rest of the burst meets it. */
const KILL_AFTER = 20;

const ws = new Workspace();
const agents: Agent[] = [];

afterAll(async () => {
  for (const agent of agents) await agent.terminate();
  ws.cleanup();
}, 60_000);

async function startAgent(): Promise<{ agent: Agent; session: KubectlSession }> {
  ensureBinary();
  const agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit"]);
  agents.push(agent);
  await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
  return { agent, session: new KubectlSession(ws.db, ws.cli("kubeconfig")) };
}

describeWithKubectl("kubectl create through kill -9", KUBECTL.default, (kubectl) => {
  test("every pod kubectl reported created survives kill -9 and runs after the restart, none twice", async () => {
    const first = await startAgent();
    const acknowledged: string[] = [];
    let next = 0;
    let killed: Promise<void> | undefined;
    const create = async (index: number) => {
      const name = `burst-${index}`;
      const file = join(first.session.dir, `${name}.yaml`);
      writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n    - {name: app, image: busybox, command: [sleep, '600']}\n`);
      const result = await first.session.run(kubectl, ["create", "-f", file], { timeoutMs: 20_000 });
      if (result.status === 0 && result.stdout === `pod/${name} created\n`) acknowledged.push(name);
      if (acknowledged.length === KILL_AFTER) killed ??= first.agent.kill9();
    };
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < PODS) await create(next++);
      }),
    );
    await killed;
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(acknowledged.length).toBeLessThan(PODS);
    first.session[Symbol.dispose]();

    const second = await startAgent();
    try {
      type Listed = { metadata: { name: string; uid: string }; status: { phase: string; containerStatuses?: { restartCount: number; state: { running?: unknown } }[] } };
      const list = async () => JSON.parse((await second.session.run(kubectl, ["get", "pods", "-o", "json"])).stdout).items as Listed[];
      const running = await waitFor(
        "every acknowledged pod Running",
        async () => {
          const items = await list();
          const byName = new Map(items.map((pod) => [pod.metadata.name, pod]));
          return acknowledged.every((name) => byName.get(name)?.status.containerStatuses?.[0]?.state.running) && items;
        },
        60_000,
        () => second.agent.stdout.slice(-2000),
      );
      const names = running.map((pod) => pod.metadata.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of acknowledged) expect(names).toContain(name);
      // Only the burst's pods, each a pod the API stored: nothing half-created.
      for (const name of names) expect(name).toMatch(/^burst-\d+$/);
      expect(ws.query<{ n: number }>("SELECT count(*) AS n FROM api_pods")[0]!.n).toBe(names.length);
      // Started once: a pod running before the kill was adopted, not started a second time.
      const starts = ws.query<{ name: string; starts: number }>(
        "SELECT p.name AS name, count(a.attempt) AS starts FROM pods p JOIN attempts a ON a.pod_uid = p.uid WHERE p.deleted_at IS NULL GROUP BY p.uid",
      );
      expect(starts.filter((row) => row.starts !== 1)).toEqual([]);
      expect(running.every((pod) => pod.status.containerStatuses![0]!.restartCount === 0)).toBe(true);
    } finally {
      await second.agent.terminate(60_000);
      second.session[Symbol.dispose]();
    }
  }, 180_000);
});
