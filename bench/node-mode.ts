/**
 * Issue 33's node-mode figures, on the compiled binary and the process runtime, joined to the real
 * control plane (scripts/cluster-env) as node `bench-1`:
 *   - N pods bound to the node at once (created through the API server in parallel, `spec.nodeName`
 *     set, each `sleep 3600`): the time from the first create to all Running and ready in the API
 *     server (and, for the split, to all running in the agent's database); next to it, the floor
 *     measured in the same run: the same N pods as static pods (manifest files dropped at once) on
 *     the same agent setup, the time to all running in the database. Goal: within 1.3x.
 *   - The agent's requests to the API server at steady state: over a window (60 s) once all N
 *     cluster pods are Running, the agent's own counts (its /metrics, minikubelet_cluster_requests_total
 *     by verb and resource), per pod. Goal: none but the Lease's renewals and the open watch.
 * Figures only, no assertions. It uses the control plane of MINIKUBELET_CLUSTER_DIR/SERVER/BIN when
 * one is up (as scripts/cluster-env prints them), else starts its own and stops it at the end; every
 * agent runs with --stop-pods-on-exit and is stopped by its pid, and what it made in the cluster
 * (the node, its pods, the namespaces) is deleted.
 *
 *   node_modules/.bin/bun bench/node-mode.ts [PODS] [--window SECONDS]
 *   (defaults: 100 pods, a 60 s window)
 */
import { Database } from "bun:sqlite";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ClusterClient } from "../src/node/cluster-client.ts";
import { BINARY, ensureBinary, freePort, killRecordedContainers, removeProcessState } from "../test/e2e/helpers.ts";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const count = Number(args.find((arg, i) => /^\d+$/.test(arg) && !args[i - 1]?.startsWith("--")) ?? 100);
const windowSeconds = option("--window", 60);
const NODE = "bench-1";
const STATIC_NS = "bench-static";
const API_NS = "bench-api";

const benchStart = performance.now();
/** Progress on stderr, so a slow step shows where the time goes; the figures go to stdout. */
const progress = (what: string) => console.error(`bench +${((performance.now() - benchStart) / 1000).toFixed(1)} s: ${what}`);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function until<T>(what: string, ready: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, pollMs = 20): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await ready();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

/** The control plane: the one already up (the caller's), or one of our own, stopped at the end. */
function controlPlane(): { dir: string; server: string; bin: string; ours: boolean } {
  const { MINIKUBELET_CLUSTER_DIR: dir, MINIKUBELET_CLUSTER_SERVER: server, MINIKUBELET_CLUSTER_BIN: bin } = process.env;
  if (dir && server && bin && existsSync(join(dir, "admin.kubeconfig"))) return { dir, server, bin, ours: false };
  const own = mkdtempSync(join(tmpdir(), "mk-bench-cluster-"));
  const up = spawnSync(join(ROOT, "scripts/cluster-env"), ["up"], { env: { ...process.env, MINIKUBELET_CLUSTER_DIR: own }, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const exported = (name: string) => new RegExp(`^export ${name}=(.*)$`, "m").exec(up.stdout ?? "")?.[1];
  if (up.status !== 0 || !exported("MINIKUBELET_CLUSTER_SERVER")) {
    stopControlPlane(own);
    throw new Error(`scripts/cluster-env up failed (exit ${up.status})`);
  }
  return { dir: own, server: exported("MINIKUBELET_CLUSTER_SERVER")!, bin: exported("MINIKUBELET_CLUSTER_BIN")!, ours: true };
}

function stopControlPlane(dir: string): void {
  spawnSync(join(ROOT, "scripts/cluster-env"), ["down"], { env: { ...process.env, MINIKUBELET_CLUSTER_DIR: dir }, stdio: ["ignore", "ignore", "inherit"] });
}

/** The bench's own view of the cluster: the admin's certificate, on the agent's own client. */
function adminClient(dir: string, server: string): ClusterClient {
  const pki = (name: string) => readFileSync(join(dir, "pki", name), "utf8");
  return new ClusterClient({ file: join(dir, "admin.kubeconfig"), server, ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key"), insecure: false });
}

function podSpec(name: string, namespace: string, nodeName?: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      ...(nodeName && { nodeName }),
      // Not mounted by the agent yet: a pod with the token volume is refused.
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "app", image: "busybox", command: ["sleep", "3600"] }],
    },
  };
}

const podName = (i: number) => `sleeper-${String(i).padStart(3, "0")}`;

/** One agent joined as NODE with its own work dir (database, manifests), the kubelet port on a free port. */
class NodeAgent {
  readonly work = mkdtempSync(join(tmpdir(), "mk-bench-node-"));
  readonly manifests = join(this.work, "manifests");
  readonly db = join(this.work, "state.db");
  readonly port: Promise<number> = freePort();
  child!: ChildProcess;
  exited!: Promise<void>;
  stderr = "";
  private reader?: Database;

  constructor(private readonly credentials: { kubeconfig: string; cert: string; key: string }) {
    mkdirSync(this.manifests);
  }

  async start(): Promise<void> {
    const { BUN_BE_BUN: _, ...env } = process.env;
    const argv = ["run", "--kubeconfig", this.credentials.kubeconfig, "--node", NODE, "--manifests", this.manifests, "--db", this.db, "--api-listen", "off"];
    argv.push("--kubelet-listen", `127.0.0.1:${await this.port}`, "--tls-cert-file", this.credentials.cert, "--tls-private-key-file", this.credentials.key);
    argv.push("--max-pods", String(count + 50), "--stop-pods-on-exit");
    // BENCH_PROFILE_DIR: the agent from source under bun's CPU profiler, a profile per agent written there on exit.
    const profile = process.env.BENCH_PROFILE_DIR;
    const [command, ...prefix] = profile ? [process.execPath, "--cpu-prof-md", `--cpu-prof-dir=${profile}`, join(ROOT, "src/main.ts")] : [BINARY];
    this.child = spawn(command!, [...prefix, ...argv], { env: { ...env, TZ: "UTC", NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] });
    this.child.stderr?.on("data", (chunk) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    this.exited = new Promise((done) => this.child.once("exit", () => done()));
  }

  /** Containers the database says are running. */
  running(): number {
    if (!this.reader) {
      if (!existsSync(this.db)) return 0;
      try {
        this.reader = new Database(this.db, { readonly: true });
      } catch {
        return 0;
      }
    }
    try {
      return (this.reader.query("SELECT count(*) AS n FROM containers WHERE state = 'running'").get() as { n: number }).n;
    } catch {
      return 0; // not migrated yet
    }
  }

  /** The agent's requests to the API server so far, `VERB resource` -> count, from its /metrics. */
  async requests(tls: { ca: string; cert: string; key: string }): Promise<Map<string, number>> {
    const response = await fetch(`https://127.0.0.1:${await this.port}/metrics`, { tls });
    if (!response.ok) throw new Error(`agent /metrics: ${response.status} ${await response.text()}`);
    const counts = new Map<string, number>();
    for (const match of (await response.text()).matchAll(/^minikubelet_cluster_requests_total\{verb="([^"]*)",resource="([^"]*)"\} (\d+)$/gm)) {
      counts.set(`${match[1]} ${match[2]}`, Number(match[3]));
    }
    return counts;
  }

  /** SIGTERM: with --stop-pods-on-exit the agent stops every pod before it exits; then whatever is left is killed. */
  async stop(): Promise<void> {
    this.reader?.close();
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 60_000);
      await this.exited;
      clearTimeout(timer);
    }
    killRecordedContainers(this.work);
    removeProcessState(this.db);
    rmSync(this.work, { recursive: true, force: true });
  }
}

ensureBinary();
const plane = controlPlane();
const admin = adminClient(plane.dir, plane.server);
const pki = (name: string) => readFileSync(join(plane.dir, "pki", name), "utf8");
const adminTls = { ca: pki("ca.crt"), cert: pki("admin.crt"), key: pki("admin.key") };
const made = spawnSync(join(ROOT, "scripts/cluster-env"), ["node-kubeconfig", NODE], { env: { ...process.env, MINIKUBELET_CLUSTER_DIR: plane.dir }, encoding: "utf8" });
if (made.status !== 0) throw new Error(`cluster-env node-kubeconfig: ${made.stderr}`);
const credentials = { kubeconfig: join(plane.dir, `node-${NODE}.kubeconfig`), cert: join(plane.dir, `node-${NODE}.crt`), key: join(plane.dir, `node-${NODE}.key`) };

const agents: NodeAgent[] = [];
async function cleanUp(): Promise<void> {
  for (const agent of agents) await agent.stop();
  for (const ns of [STATIC_NS, API_NS]) {
    await admin.request({ method: "DELETE", path: `/api/v1/namespaces/${ns}/pods`, query: { gracePeriodSeconds: 0 } }).catch(() => undefined);
    await admin.request({ method: "DELETE", path: `/api/v1/namespaces/${ns}` }).catch(() => undefined);
  }
  await admin.request({ method: "DELETE", path: `/api/v1/nodes/${NODE}` }).catch(() => undefined);
  if (plane.ours) stopControlPlane(plane.dir);
  progress("cleaned up");
}

/** A started agent, once its Node is Ready and its watch of the node's pods is open. */
async function readyAgent(): Promise<NodeAgent> {
  const agent = new NodeAgent(credentials);
  agents.push(agent);
  await agent.start();
  await until("the agent's watch of its pods", async () => ((await agent.requests(adminTls).catch(() => new Map<string, number>())).get("WATCH pods") ?? 0) > 0, 60_000, 100);
  await until(`node ${NODE} Ready`, async () => {
    const node = await admin.request({ method: "GET", path: `/api/v1/nodes/${NODE}` }).catch(() => undefined);
    return (node?.status?.conditions as { type: string; status: string }[] | undefined)?.some((c) => c.type === "Ready" && c.status === "True");
  }, 60_000, 100);
  return agent;
}

/** CPU seconds (user + system) a process has used so far, from /proc/PID/stat; 0 once it is gone. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** The control plane's own processes (as cluster-env recorded them): their CPU is the cluster's share of the run. */
const planePids: (number | undefined)[] = ["kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler"].map((name) => {
  try {
    return Number(readFileSync(join(plane.dir, `${name}.pid`), "utf8").trim());
  } catch {
    return undefined;
  }
});
const planeCpu = (): number => planePids.reduce<number>((sum, pid) => sum + cpuSeconds(pid), 0);

interface Cpu {
  agent: number;
  plane: number;
}

interface Figures {
  staticMs: number;
  apiMs: number;
  apiDbMs: number;
  createsMs: number;
  staticCpu: Cpu;
  apiCpu: Cpu;
  /** The agent's requests from the first create to all Running, `VERB resource` -> count. */
  starting: Map<string, number>;
  window: Map<string, number>;
}

function countsBetween(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const between = new Map<string, number>();
  for (const [key, value] of after) if (value - (before.get(key) ?? 0) > 0) between.set(key, value - (before.get(key) ?? 0));
  return between;
}

async function measure(): Promise<Figures> {
  // A previous run's namespaces may still be terminating: created anew once they are gone.
  for (const ns of [STATIC_NS, API_NS]) {
    await until(`namespace ${ns} active`, async () => {
      const created = await admin.request({ method: "POST", path: "/api/v1/namespaces", body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } } }).then(
        () => true,
        (error) => {
          if (!(error as { alreadyExists?: boolean }).alreadyExists) throw error;
          return false;
        },
      );
      return created || (await admin.request({ method: "GET", path: `/api/v1/namespaces/${ns}` }).catch(() => undefined))?.status?.phase === "Active";
    }, 120_000, 200);
  }

  // The floor: the same pods as files, dropped at once into the manifests of a settled agent.
  const first = await readyAgent();
  progress("the static run's agent is ready");
  const staticCpuBefore = { agent: cpuSeconds(first.child.pid), plane: planeCpu() };
  const staticStart = performance.now();
  for (let i = 0; i < count; i++) writeFileSync(join(first.manifests, `${podName(i)}.json`), JSON.stringify(podSpec(podName(i), STATIC_NS)));
  await until(`${count} static pods running`, () => first.running() >= count, 180_000);
  const staticMs = performance.now() - staticStart;
  const staticCpu = { agent: cpuSeconds(first.child.pid) - staticCpuBefore.agent, plane: planeCpu() - staticCpuBefore.plane };
  progress(`${count} static pods running`);
  await first.stop();
  agents.splice(agents.indexOf(first), 1);
  progress("the static run's agent stopped with its pods");
  // Their mirror pods go, so the next agent's node has none of them.
  await admin.request({ method: "DELETE", path: `/api/v1/namespaces/${STATIC_NS}/pods`, query: { gracePeriodSeconds: 0 } });

  // The same pods through the API server, bound to a fresh agent of the same setup.
  const agent = await readyAgent();
  progress("the cluster run's agent is ready");
  const notReady = new Set(Array.from({ length: count }, (_, i) => podName(i)));
  const watching = new AbortController();
  const list = await admin.request({ method: "GET", path: `/api/v1/namespaces/${API_NS}/pods` });
  const seen = (async () => {
    for await (const event of admin.watch(`/api/v1/namespaces/${API_NS}/pods`, { resourceVersion: list.metadata.resourceVersion }, watching.signal)) {
      const pod = event.object as Record<string, any>;
      if (pod.status?.phase === "Running" && pod.status.containerStatuses?.[0]?.ready === true) notReady.delete(pod.metadata.name);
      if (notReady.size === 0) return performance.now();
    }
    throw new Error("the watch of the bench's pods ended");
  })();
  let apiDbMs = 0;
  const requestsBefore = await agent.requests(adminTls);
  const apiCpuBefore = { agent: cpuSeconds(agent.child.pid), plane: planeCpu() };
  const apiStart = performance.now();
  const inDb = until(`${count} cluster pods running in the database`, () => agent.running() >= count, 180_000).then(() => (apiDbMs = performance.now() - apiStart));
  await Promise.all(Array.from({ length: count }, (_, i) => admin.request({ method: "POST", path: `/api/v1/namespaces/${API_NS}/pods`, body: podSpec(podName(i), API_NS, NODE) })));
  const createsMs = performance.now() - apiStart;
  const apiMs = (await Promise.race([seen, sleep(180_000).then(() => Promise.reject(new Error(`${notReady.size} pods not Running in the API server after 180 s`)))])) - apiStart;
  const apiCpu = { agent: cpuSeconds(agent.child.pid) - apiCpuBefore.agent, plane: planeCpu() - apiCpuBefore.plane };
  watching.abort();
  await inDb;
  const starting = countsBetween(requestsBefore, await agent.requests(adminTls));

  progress(`${count} cluster pods Running`);
  // Steady state: what the agent asks of the API server while its pods just run.
  await sleep(5_000);
  const before = await agent.requests(adminTls);
  await sleep(windowSeconds * 1000);
  const window = countsBetween(before, await agent.requests(adminTls));
  return { staticMs, apiMs, apiDbMs, createsMs, staticCpu, apiCpu, starting, window };
}

try {
  const f = await measure();
  progress("measured");
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`node mode, ${count} pods on one node (process runtime, sleep 3600), compiled binary, control plane on this host`);
  console.log("");
  console.log("| what | time | floor: the same pods as static pods, same agent setup, same run | ratio (goal <= 1.3) |");
  console.log("|---|---|---|---|");
  console.log(`| first create -> all Running and ready in the API server | ${s(f.apiMs)} | ${s(f.staticMs)} (all running in the database) | ${(f.apiMs / f.staticMs).toFixed(2)} |`);
  console.log(`| first create -> all running in the agent's database | ${s(f.apiDbMs)} | ${s(f.staticMs)} | ${(f.apiDbMs / f.staticMs).toFixed(2)} |`);
  console.log(`| the ${count} creates themselves (parallel, as the admin) | ${s(f.createsMs)} | | |`);
  console.log("");
  const cores = navigator.hardwareConcurrency;
  const c = (seconds: number) => `${seconds.toFixed(2)} s`;
  console.log(`| CPU used while the pods started (${cores} cores) | agent | control plane (API server, etcd, controllers, scheduler) |`);
  console.log("|---|---|---|");
  console.log(`| cluster pods, first create -> all Running in the API server | ${c(f.apiCpu.agent)} | ${c(f.apiCpu.plane)} |`);
  console.log(`| static pods (the floor), files dropped -> all running | ${c(f.staticCpu.agent)} | ${c(f.staticCpu.plane)} |`);
  console.log("");
  console.log(`| the agent's requests to the API server, first create -> all Running | count | per pod |`);
  console.log("|---|---|---|");
  for (const [key, value] of [...f.starting].sort()) console.log(`| ${key} | ${value} | ${(value / count).toFixed(2)} |`);
  console.log("");
  console.log(`| the agent's requests to the API server over ${windowSeconds} s, all ${count} Running | count | per pod |`);
  console.log("|---|---|---|");
  for (const [key, value] of [...f.window].sort()) console.log(`| ${key} | ${value} | ${(value / count).toFixed(2)} |`);
  const podRequests = [...f.window].filter(([key]) => !key.endsWith(" leases") && !key.startsWith("WATCH ")).reduce((sum, [, value]) => sum + value, 0);
  console.log(`| all but the Lease and the watches | ${podRequests} | ${(podRequests / count).toFixed(2)} |`);
  console.log("");
  console.log(`goals: within 1.3x of the static floor; at steady state nothing but the Lease (renewed every 10 s: ${windowSeconds / 10} in ${windowSeconds} s) and the open watch (a re-watch when the API server ends one). A figure means something only next to its floor, on the same machine in the same run.`);
} finally {
  await cleanUp();
}
// The admin client's kept-alive connections to the API server would hold the process for minutes.
process.exit(process.exitCode ?? 0);
