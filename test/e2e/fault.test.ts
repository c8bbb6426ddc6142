/**
 * Issue 7 and 11 fault injection, process runtime, compiled binary: the agent is `kill -9`'d
 * FAULT_ROUNDS times (default 20) while pods are added, removed, replaced and crash-looping
 * (manifest files change between restarts). Each kill comes either at a random moment or right
 * after the agent prints a `Started`, `Killing` or `Exited` line, the moments between an action and
 * its checkpoint. After the last restart it settles, and then: at most one running container per
 * (pod, container), no process outside the desired pods, restart counts equal to the attempts
 * table, no attempt number used by two containers of one pod incarnation, and an intact database.
 * The seed is printed so a failure can be replayed (FAULT_SEED=...).
 */
import { expect, test } from "bun:test";
import { processE2E, Agent, containerRows, isRunning, processContainers, processesMentioning, waitFor, Workspace } from "./helpers.ts";

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 20);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`FAULT_ROUNDS must be a whole number above 0 (got ${process.env.FAULT_ROUNDS})`);

/** When each round's agent dies: at a random moment, or the moment it prints one of these events. */
const KILL_MOMENTS = ["random", "Started", "Killing", "Exited"] as const;
/** How long a round waits for its event before killing anyway (a round without crashes has no Exited). */
const EVENT_WAIT_MS = 2500;

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

/**
 * Every container attempt seen on disk, by pod incarnation: `generation` is the test's count of
 * (re)creations of the pod's manifest, since a manifest written back revives the same uid and a new
 * incarnation rightly numbers its attempts from 0 again. Sampled while agents run and after each kill.
 * Only attempts that ran count (their monitor recorded a pid): an agent killed between creating an
 * attempt's directory and launching its monitor leaves one that never ran, and that number is free.
 */
class AttemptLedger {
  private readonly ids = new Map<string, Set<string>>();
  private readonly generationOf = new Map<string, number>();
  private readonly seen = new Map<string, string>();
  private readonly ran = new Set<string>();

  /** The pool pod `name` got a new manifest (added or changed): a new incarnation from now on. */
  renew(name: string): void {
    this.generationOf.set(name, (this.generationOf.get(name) ?? 0) + 1);
  }

  sample(ws: Workspace): void {
    for (const c of processContainers(ws)) {
      // An id keeps the incarnation it was first seen in, pid or not.
      let key = this.seen.get(c.id);
      if (!key) {
        const name = c.podName.replace(/-n1$/, "");
        key = `${c.podName}#${this.generationOf.get(name) ?? 0}/${c.podUid.slice(0, 8)}/${c.name}/attempt ${c.attempt}`;
        this.seen.set(c.id, key);
      }
      const ids = this.ids.get(key) ?? new Set<string>();
      ids.add(c.id);
      this.ids.set(key, ids);
      if (c.pid !== undefined) this.ran.add(c.id);
    }
  }

  /** Attempt numbers two containers of one incarnation carried, both of which ran. */
  reused(): string[] {
    return [...this.ids]
      .map(([key, ids]) => [key, [...ids].filter((id) => this.ran.has(id))] as const)
      .filter(([, ids]) => ids.length > 1)
      .map(([key, ids]) => `${key}: ${ids.join(", ")}`);
  }
}

test(`${ROUNDS} kill -9s during churn, some right after Started, Killing or Exited: no duplicates, no orphans, no attempt twice, counts match attempts, database intact`, async () => {
  const seed = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`fault.test.ts seed: FAULT_SEED=${seed}`);
  const rand = random(seed);
  const workspace = (e2e.ws = new Workspace());
  const wanted = new Map<string, number>([["stable", 1], ["crash", 1]]);
  const ledger = new AttemptLedger();
  for (const name of wanted.keys()) ledger.renew(name);
  const moments = new Map<string, number>();
  const writeAll = () => {
    for (const name of Object.keys(POOL)) {
      const version = wanted.get(name);
      if (version === undefined) workspace.remove(`${name}.yaml`);
      else workspace.write(`${name}.yaml`, POOL[name]!(version));
    }
  };
  writeAll();

  for (let round = 0; round < ROUNDS; round++) {
    const moment = KILL_MOMENTS[Math.floor(rand() * KILL_MOMENTS.length)]!;
    // Churn between restarts: add, remove or change one pod (sometimes two). A round that is to
    // end at a Killing line also replaces a wanted pod, so the new agent has one to stop.
    const longRunning = ["stable", "pair"].filter((name) => wanted.has(name));
    const replace = moment === "Killing" ? longRunning[Math.floor(rand() * longRunning.length)] : undefined;
    if (replace) {
      wanted.set(replace, wanted.get(replace) === 1 ? 2 : 1);
      ledger.renew(replace);
    }
    for (let changes = rand() < 0.3 ? 2 : 1; changes > 0; changes--) {
      const name = Object.keys(POOL)[Math.floor(rand() * Object.keys(POOL).length)]!;
      if (name === replace) continue;
      const version = wanted.get(name);
      if (version === undefined) wanted.set(name, 1);
      else if (rand() < 0.5) wanted.delete(name);
      else wanted.set(name, version === 1 ? 2 : 1);
      if (wanted.has(name)) ledger.renew(name);
    }
    writeAll();
    const agent = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "4"]);
    e2e.agents.push(agent);
    const sampler = setInterval(() => ledger.sample(workspace), 50);
    let landed = "random";
    if (moment === "random") {
      await Bun.sleep(100 + Math.floor(rand() * 1400));
    } else {
      const killed = agent.killOn(new RegExp(` (Normal|Warning) ${moment} `), moment === "Killing" ? 1 : 1 + Math.floor(rand() * 2));
      const line = await Promise.race([killed, Bun.sleep(EVENT_WAIT_MS).then(() => undefined)]);
      landed = line ? moment : `${moment} (not seen, killed at ${EVENT_WAIT_MS} ms)`;
    }
    await agent.kill9();
    clearInterval(sampler);
    // Before the next round's manifests: what this agent started belongs to the incarnations it saw.
    ledger.sample(workspace);
    moments.set(landed, (moments.get(landed) ?? 0) + 1);
    e2e.agents.pop();
  }
  console.log(`fault.test.ts kills: ${[...moments].map(([m, n]) => `${m} x${n}`).join(", ")}`);

  // --stop-pods-on-exit: the final SIGTERM must leave nothing running (by default pods outlive the agent).
  const last = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "4", "--stop-pods-on-exit"]);
  e2e.agents.push(last);
  const sampler = setInterval(() => ledger.sample(workspace), 50);
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
  // No process of ours outside those containers (monitors name their container's directory). A
  // crash-looping container is starting or ending now and then (its monitor up, its process not
  // running): such a monitor is gone a moment later, a stray is not. Processes are listed before
  // containers, so each process seen had its directory by then.
  const strays = () => {
    const ours = processesMentioning(workspace.path).filter((p) => p.pid !== last.pid);
    const dirs = running().map((c) => `/containers/${c.id} `);
    return ours.filter((p) => !dirs.some((dir) => p.cmdline.includes(dir)));
  };
  let seen = strays();
  for (const deadline = Date.now() + 5000; seen.length > 0 && Date.now() < deadline; seen = strays()) await Bun.sleep(20);
  expect(seen).toEqual([]);

  // Restart counts are the attempts table's, with no attempt missing, and the runtime agrees. The
  // crash-looping pods go on starting attempts meanwhile: the database and the runtime are read
  // together, again until they agree (a moment apart, an attempt may have started between them).
  const readCounts = () =>
    workspace.query<{ pod: string; name: string; restart_count: number; state: string; container_id: string | null; attempts: number; max_attempt: number }>(
      `SELECT p.name AS pod, c.name, c.restart_count, c.state, c.container_id, COUNT(a.attempt) AS attempts, MAX(a.attempt) AS max_attempt
       FROM containers c JOIN pods p ON p.uid = c.pod_uid LEFT JOIN attempts a ON a.pod_uid = c.pod_uid AND a.container = c.name
       WHERE p.deleted_at IS NULL GROUP BY c.pod_uid, c.name`,
    );
  const disagreements = () => {
    const counts = readCounts();
    const upNow = running();
    return counts.flatMap((row) => {
      const consistent = row.restart_count === row.max_attempt && row.attempts === row.max_attempt + 1;
      const inRuntime = row.state === "running" ? upNow.find((c) => c.id === row.container_id) : undefined;
      const agrees = row.state !== "running" || inRuntime?.attempt === row.restart_count;
      return consistent && agrees ? [] : [{ ...row, consistent, runtimeAttempt: inRuntime?.attempt }];
    });
  };
  let disagreeing = disagreements();
  for (const deadline = Date.now() + 3000; disagreeing.length > 0 && Date.now() < deadline; disagreeing = disagreements()) await Bun.sleep(20);
  expect(disagreeing).toEqual([]);

  clearInterval(sampler);
  ledger.sample(workspace);
  expect(ledger.reused()).toEqual([]);

  expect(workspace.cli("sql", "PRAGMA integrity_check").trim().split("\n").at(-1)).toBe("ok");

  expect(await last.terminate()).toBe(0);
  e2e.agents.pop();
  expect(processesMentioning(workspace.path)).toEqual([]);
}, 60_000 + ROUNDS * 4000);
