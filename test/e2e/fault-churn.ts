/**
 * The kill -9 churn scenario of issues 7, 11 and 26, for either runtime: the agent is `kill -9`'d
 * `rounds` times while pods are added, removed, replaced and crash-looping (manifest files change
 * between restarts). Each kill comes either at a random moment or right after the agent prints a
 * `Started`, `Killing` or `Exited` line, the moments between an action and its checkpoint. After
 * the last restart it settles, and then: at most one running container per (pod, container),
 * nothing of ours running outside the desired pods, restart counts equal to the attempts table, no
 * attempt number used by two containers of one pod incarnation, and an intact database. The seed
 * is printed so a failure can be replayed (FAULT_SEED=...). A runtime is seen only through its
 * `ChurnRuntime`: how it lists container attempts and what it calls a stray.
 */
import { expect } from "bun:test";
import { Agent, waitFor, type Workspace } from "./helpers.ts";
import { seededRandom } from "../seeded-random.ts";

/** One container attempt as the runtime shows it. */
export interface ChurnContainer {
  id: string;
  podUid: string;
  /** The pod's full name (`stable-n1`). */
  podName: string;
  name: string;
  attempt: number;
  /** Its process was started (an attempt created but never started does not hold its number). */
  ran: boolean;
  running: boolean;
}

export interface ChurnRuntime {
  /** `run` flags that choose the runtime. */
  flags: string[];
  /** The pods' namespace: a run of its own, so parallel runs never meet. */
  namespace: string;
  /** The lines after `name:` of a container: its image (and pull policy) as the runtime wants them. */
  imageLines: string;
  /** How long a round waits for its kill moment's event before killing anyway. */
  eventWaitMs: number;
  /** What the settled agent may take to converge on the last manifests. */
  settleMs: number;
  containers(ws: Workspace): Promise<ChurnContainer[]>;
  /**
   * What of ours runs outside `running` (the running containers of the live pods `liveUids`),
   * listed so a failure names it; `agentPid` is the settled agent's own.
   */
  strays(ws: Workspace, liveUids: ReadonlySet<string>, running: readonly ChurnContainer[], agentPid: number): Promise<unknown[]>;
  /** What is still running of ours after the agent's --stop-pods-on-exit: must be nothing. */
  leftovers(ws: Workspace): Promise<unknown[]>;
}

/** When each round's agent dies: at a random moment, or the moment it prints one of these events. */
const KILL_MOMENTS = ["random", "Started", "Killing", "Exited"] as const;
const SAMPLE_EVERY_MS = 50;

/** Pods the churn picks from; each has two versions, so rewriting a file replaces the pod. */
const POOL: Record<string, (version: number, runtime: ChurnRuntime) => string> = {
  stable: (v, r) => pod(r, "stable", `echo v${v}; exec sleep 1000`),
  crash: (v, r) => pod(r, "crash", `echo v${v}; exit 1`),
  flaky: (v, r) => pod(r, "flaky", `echo v${v}; sleep 0.3; exit 1`),
  short: (v, r) => pod(r, "short", `echo v${v}; sleep 1; exit 0`),
  pair: (v, r) => pod(r, "pair", `echo v${v}; exec sleep 1000`, `echo v${v}; exec sleep 1000`),
};

function pod(runtime: ChurnRuntime, name: string, script: string, second?: string): string {
  const container = (containerName: string, command: string) =>
    `    - name: ${containerName}\n${runtime.imageLines}\n      command: ["sh", "-c", ${JSON.stringify(command)}]`;
  const containers = [container("main", script)];
  if (second) containers.push(container("side", second));
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${runtime.namespace}}
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  containers:
${containers.join("\n")}
`;
}

/**
 * Every container attempt seen, by pod incarnation: `generation` is the test's count of
 * (re)creations of the pod's manifest, since a manifest written back revives the same uid and a new
 * incarnation rightly numbers its attempts from 0 again. Sampled while agents run and after each kill.
 * Only attempts that ran count: an agent killed between creating an attempt and starting it leaves
 * one that never ran, and that number is free.
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

  record(containers: readonly ChurnContainer[]): void {
    for (const c of containers) {
      // An id keeps the incarnation it was first seen in, started or not.
      let key = this.seen.get(c.id);
      if (!key) {
        const name = c.podName.replace(/-n1$/, "");
        key = `${c.podName}#${this.generationOf.get(name) ?? 0}/${c.podUid.slice(0, 8)}/${c.name}/attempt ${c.attempt}`;
        this.seen.set(c.id, key);
      }
      const ids = this.ids.get(key) ?? new Set<string>();
      ids.add(c.id);
      this.ids.set(key, ids);
      if (c.ran) this.ran.add(c.id);
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

/** Samples the runtime into the ledger every SAMPLE_EVERY_MS until stopped; one sample at a time. */
function startSampler(runtime: ChurnRuntime, ws: Workspace, ledger: AttemptLedger): { stop(): Promise<void> } {
  let pending: Promise<void> = Promise.resolve();
  let busy = false;
  const sample = () => {
    if (busy) return;
    busy = true;
    pending = runtime
      .containers(ws)
      .then((found) => ledger.record(found))
      .finally(() => (busy = false));
  };
  const timer = setInterval(sample, SAMPLE_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      ledger.record(await runtime.containers(ws));
    },
  };
}

/** Polls an async check until it returns an empty list or `ms` pass; returns the last list. */
async function untilEmpty<T>(check: () => Promise<T[]>, ms: number): Promise<T[]> {
  let found = await check();
  for (const deadline = Date.now() + ms; found.length > 0 && Date.now() < deadline; found = await check()) await Bun.sleep(20);
  return found;
}

/** The scenario; `agents` is the caller's list of live agents, which its cleanup terminates. */
export async function runChurn(runtime: ChurnRuntime, workspace: Workspace, rounds: number, agents: Agent[]): Promise<void> {
  const seed = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`fault churn seed: FAULT_SEED=${seed}`);
  const rand = seededRandom(seed);
  const flags = [...runtime.flags, "--backoff-base", "1", "--backoff-max", "4"];
  const wanted = new Map<string, number>([["stable", 1], ["crash", 1]]);
  const ledger = new AttemptLedger();
  for (const name of wanted.keys()) ledger.renew(name);
  const moments = new Map<string, number>();
  const writeAll = () => {
    for (const name of Object.keys(POOL)) {
      const version = wanted.get(name);
      if (version === undefined) workspace.remove(`${name}.yaml`);
      else workspace.write(`${name}.yaml`, POOL[name]!(version, runtime));
    }
  };
  writeAll();

  for (let round = 0; round < rounds; round++) {
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
    const agent = new Agent(workspace, flags);
    agents.push(agent);
    const sampler = startSampler(runtime, workspace, ledger);
    let landed = "random";
    if (moment === "random") {
      await Bun.sleep(100 + Math.floor(rand() * 1400));
    } else {
      const killed = agent.killOn(new RegExp(` (Normal|Warning) ${moment} `), moment === "Killing" ? 1 : 1 + Math.floor(rand() * 2));
      const line = await Promise.race([killed, Bun.sleep(runtime.eventWaitMs).then(() => undefined)]);
      landed = line ? moment : `${moment} (not seen, killed at ${runtime.eventWaitMs} ms)`;
    }
    await agent.kill9();
    // Before the next round's manifests: what this agent started belongs to the incarnations it saw.
    await sampler.stop();
    moments.set(landed, (moments.get(landed) ?? 0) + 1);
    agents.pop();
  }
  console.log(`fault churn kills: ${[...moments].map(([m, n]) => `${m} x${n}`).join(", ")}`);

  // --stop-pods-on-exit: the final SIGTERM must leave nothing running (by default pods outlive the agent).
  const last = new Agent(workspace, [...flags, "--stop-pods-on-exit"]);
  agents.push(last);
  const sampler = startSampler(runtime, workspace, ledger);
  const desiredNames = [...wanted.keys()].map((name) => `${name}-n1`).sort();
  const running = async () => (await runtime.containers(workspace)).filter((c) => c.running);
  const liveUids = () => new Set(workspace.query<{ uid: string }>("SELECT uid FROM pods WHERE deleted_at IS NULL").map((p) => p.uid));
  await waitFor(
    "the pods to settle on the last manifests",
    async () => {
      const live = workspace.query<{ name: string; uid: string; deletion_requested_at: number | null; updated_at: number }>(
        "SELECT name, uid, deletion_requested_at, updated_at FROM pods WHERE deleted_at IS NULL ORDER BY name",
      );
      if (JSON.stringify(live.map((p) => p.name)) !== JSON.stringify(desiredNames)) return false;
      // Synced by the last agent, not just left so by the one killed before it.
      if (live.some((p) => p.updated_at < last.startedAt)) return false;
      if (live.some((p) => p.deletion_requested_at !== null)) return false;
      const uids = new Set(live.map((p) => p.uid));
      // Long-running containers up, and nothing running for a pod that is not wanted.
      const up = await running();
      if (up.some((c) => !uids.has(c.podUid))) return false;
      const rows = workspace.query<{ pod: string; state: string }>(
        "SELECT p.name AS pod, c.state FROM containers c JOIN pods p ON p.uid = c.pod_uid WHERE p.deleted_at IS NULL",
      );
      return rows.filter((r) => r.pod.startsWith("stable") || r.pod.startsWith("pair")).every((r) => r.state === "running");
    },
    runtime.settleMs,
    () => `wanted ${desiredNames.join(",")}\n${JSON.stringify(workspace.query("SELECT name, deleted_at, deletion_requested_at FROM pods"))}\n${last.stderr}`,
  );

  // At most one running container per (pod, container name), every one of a desired pod.
  const up = await running();
  const perContainer = new Map<string, number>();
  for (const c of up) perContainer.set(`${c.podUid}/${c.name}`, (perContainer.get(`${c.podUid}/${c.name}`) ?? 0) + 1);
  expect([...perContainer].filter(([, count]) => count > 1)).toEqual([]);
  expect(up.filter((c) => !liveUids().has(c.podUid))).toEqual([]);
  // Nothing of ours outside those containers. A crash-looping container is starting or ending now
  // and then: what it leaves is gone a moment later, a stray is not.
  expect(await untilEmpty(async () => runtime.strays(workspace, liveUids(), await running(), last.pid), 5000)).toEqual([]);

  // Restart counts are the attempts table's, with no attempt missing, and the runtime agrees. The
  // crash-looping pods go on starting attempts meanwhile: the database and the runtime are read
  // together, again until they agree (a moment apart, an attempt may have started between them).
  const readCounts = () =>
    workspace.query<{ pod: string; name: string; restart_count: number; state: string; container_id: string | null; attempts: number; max_attempt: number }>(
      `SELECT p.name AS pod, c.name, c.restart_count, c.state, c.container_id, COUNT(a.attempt) AS attempts, MAX(a.attempt) AS max_attempt
       FROM containers c JOIN pods p ON p.uid = c.pod_uid LEFT JOIN attempts a ON a.pod_uid = c.pod_uid AND a.container = c.name
       WHERE p.deleted_at IS NULL GROUP BY c.pod_uid, c.name`,
    );
  const disagreements = async () => {
    const counts = readCounts();
    const upNow = await running();
    return counts.flatMap((row) => {
      const consistent = row.restart_count === row.max_attempt && row.attempts === row.max_attempt + 1;
      const inRuntime = row.state === "running" ? upNow.find((c) => c.id === row.container_id) : undefined;
      const agrees = row.state !== "running" || inRuntime?.attempt === row.restart_count;
      return consistent && agrees ? [] : [{ ...row, consistent, runtimeAttempt: inRuntime?.attempt }];
    });
  };
  expect(await untilEmpty(disagreements, 3000)).toEqual([]);

  await sampler.stop();
  expect(ledger.reused()).toEqual([]);

  expect(workspace.cli("sql", "PRAGMA integrity_check").trim().split("\n").at(-1)).toBe("ok");

  expect(await last.terminate()).toBe(0);
  agents.pop();
  expect(await runtime.leftovers(workspace)).toEqual([]);
}
