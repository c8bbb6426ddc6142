/**
 * Issue 7 fault injection, process runtime, compiled binary: the agent is `kill -9`'d at random
 * moments 20 times while pods are added, removed, replaced and crash-looping (manifest files change
 * between restarts). After the last restart it settles, and then: at most one running container per
 * (pod, container), no process outside the desired pods, restart counts equal to the attempts
 * table, and an intact database. The seed is printed so a failure can be replayed (FAULT_SEED=...).
 */
import { expect, test } from "bun:test";
import { processE2E, Agent, containerRows, isRunning, processContainers, processesMentioning, waitFor, Workspace } from "./helpers.ts";

const ROUNDS = 20;

/** Pods the churn picks from; each has two versions, so rewriting a file replaces the pod. */
const POOL: Record<string, (version: number) => string> = {
  stable: (v) => pod("stable", "Always", `echo v${v}; exec sleep 1000`),
  crash: (v) => pod("crash", "Always", `echo v${v}; exit 1`),
  flaky: (v) => pod("flaky", "Always", `echo v${v}; sleep 0.3; exit 1`),
  short: (v) => pod("short", "Always", `echo v${v}; sleep 1; exit 0`),
  pair: (v) => pod("pair", "Always", `echo v${v}; exec sleep 1000`, `echo v${v}; exec sleep 1000`),
};

function pod(name: string, restartPolicy: string, script: string, second?: string): string {
  const containers = [`    - {name: main, image: busybox, command: ["sh", "-c", ${JSON.stringify(script)}]}`];
  if (second) containers.push(`    - {name: side, image: busybox, command: ["sh", "-c", ${JSON.stringify(second)}]}`);
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: fault}
spec:
  restartPolicy: ${restartPolicy}
  terminationGracePeriodSeconds: 1
  containers:
${containers.join("\n")}
`;
}

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const e2e = processE2E();

test("20 kill -9s during churn: no duplicates, no orphans, counts match attempts, database intact", async () => {
  const seed = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`fault.test.ts seed: FAULT_SEED=${seed}`);
  const rand = random(seed);
  const workspace = (e2e.ws = new Workspace());
  const wanted = new Map<string, number>([["stable", 1], ["crash", 1]]);
  const writeAll = () => {
    for (const name of Object.keys(POOL)) {
      const version = wanted.get(name);
      if (version === undefined) workspace.remove(`${name}.yaml`);
      else workspace.write(`${name}.yaml`, POOL[name]!(version));
    }
  };
  writeAll();

  for (let round = 0; round < ROUNDS; round++) {
    // Churn between restarts: add, remove or change one pod (sometimes two).
    for (let changes = rand() < 0.3 ? 2 : 1; changes > 0; changes--) {
      const name = Object.keys(POOL)[Math.floor(rand() * Object.keys(POOL).length)]!;
      const version = wanted.get(name);
      if (version === undefined) wanted.set(name, 1);
      else if (rand() < 0.5) wanted.delete(name);
      else wanted.set(name, version === 1 ? 2 : 1);
    }
    writeAll();
    const agent = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "4"]);
    e2e.agents.push(agent);
    await Bun.sleep(100 + Math.floor(rand() * 1400));
    await agent.kill9();
    e2e.agents.pop();
  }

  // --stop-pods-on-exit: the final SIGTERM must leave nothing running (by default pods outlive the agent).
  const last = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "4", "--stop-pods-on-exit"]);
  e2e.agents.push(last);
  const desiredNames = [...wanted.keys()].map((name) => `${name}-n1`).sort();
  const running = () => processContainers(workspace).filter((c) => !c.exited && c.pid !== undefined && isRunning(c.pid));
  await waitFor(
    "the pods to settle on the last manifests",
    () => {
      const live = workspace.query<{ name: string; uid: string; deletion_requested_at: number | null; updated_at: number }>(
        "SELECT name, uid, deletion_requested_at, updated_at FROM pods WHERE deleted_at IS NULL ORDER BY name",
      );
      if (JSON.stringify(live.map((p) => p.name)) !== JSON.stringify(desiredNames)) return false;
      // Synced by the last agent, not just left so by the one killed before it.
      if (live.some((p) => p.updated_at < last.startedAt)) return false;
      if (live.some((p) => p.deletion_requested_at !== null)) return false;
      const uids = new Set(live.map((p) => p.uid));
      // Long-running containers up, and nothing running for a pod that is not wanted.
      const up = running();
      if (up.some((c) => !uids.has(c.podUid))) return false;
      const rows = containerRows(workspace);
      return rows.filter((r) => r.pod.startsWith("stable") || r.pod.startsWith("pair")).every((r) => r.state === "running");
    },
    20_000,
    () => `wanted ${desiredNames.join(",")}\n${JSON.stringify(workspace.query("SELECT name, deleted_at, deletion_requested_at FROM pods"))}\n${last.stderr}`,
  );

  // At most one running container per (pod, container name), every one of a desired pod.
  const live = workspace.query<{ uid: string; name: string }>("SELECT uid, name FROM pods WHERE deleted_at IS NULL");
  const liveUids = new Set(live.map((p) => p.uid));
  const up = running();
  const perContainer = new Map<string, number>();
  for (const c of up) perContainer.set(`${c.podUid}/${c.name}`, (perContainer.get(`${c.podUid}/${c.name}`) ?? 0) + 1);
  expect([...perContainer].filter(([, count]) => count > 1)).toEqual([]);
  expect(up.filter((c) => !liveUids.has(c.podUid))).toEqual([]);
  // No process of ours outside those containers (monitors name their container's directory).
  const dirs = up.map((c) => `/containers/${c.id} `);
  const strays = processesMentioning(workspace.path).filter((p) => p.pid !== last.pid && !dirs.some((dir) => p.cmdline.includes(dir)));
  expect(strays).toEqual([]);

  // Restart counts are the attempts table's, with no attempt missing, and the runtime agrees.
  const counts = workspace.query<{ pod: string; name: string; restart_count: number; state: string; container_id: string | null; attempts: number; max_attempt: number }>(
    `SELECT p.name AS pod, c.name, c.restart_count, c.state, c.container_id, COUNT(a.attempt) AS attempts, MAX(a.attempt) AS max_attempt
     FROM containers c JOIN pods p ON p.uid = c.pod_uid LEFT JOIN attempts a ON a.pod_uid = c.pod_uid AND a.container = c.name
     WHERE p.deleted_at IS NULL GROUP BY c.pod_uid, c.name`,
  );
  for (const row of counts) {
    expect({ ...row, consistent: row.restart_count === row.max_attempt && row.attempts === row.max_attempt + 1 }).toEqual({ ...row, consistent: true });
    if (row.state === "running") {
      const inRuntime = up.find((c) => c.id === row.container_id);
      expect({ pod: row.pod, name: row.name, attempt: inRuntime?.attempt }).toEqual({ pod: row.pod, name: row.name, attempt: row.restart_count });
    }
  }

  expect(workspace.cli("sql", "PRAGMA integrity_check").trim().split("\n").at(-1)).toBe("ok");

  expect(await last.terminate()).toBe(0);
  e2e.agents.pop();
  expect(processesMentioning(workspace.path)).toEqual([]);
}, 90_000);
