/**
 * Issue 15's scale rows, on the compiled binary and the process runtime: N pods (each `sleep 3600`)
 * dropped into one directory before the agent starts. Prints the time until every container is
 * running as the database says, the agent's RSS then, and the agent's CPU while the N pods sleep;
 * next to them, in the same run, the floor: the same N containers started by a plain shell loop
 * through the same monitor binary (container and monitor: the same processes), and
 * N bare `setsid sleep`; for the idle CPU, an idle process of the same compiled Bun runtime over the
 * same window; and the stop of them all (SIGTERM of the agent with --stop-pods-on-exit) next to the
 * same monitors' groups killed from the bench, their exits recorded and their directories removed.
 * Figures only, no assertions. Every process it started is ended by pid.
 *
 *   node_modules/.bin/bun bench/thousand-pods.ts [PODS] [--idle SECONDS] [--runs R]
 *   (defaults: 1000 pods, 60 s of idle, 1 run)
 */
import { Database } from "bun:sqlite";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findGzip } from "../src/runtime/process/process-monitor.ts";
import { installMonitorBinary } from "../src/runtime/process/monitor-binary.ts";
import { DEFAULT_LOG_POLICY } from "../src/runtime/log-rotation-policy.ts";
import { BINARY, ensureBinary, removeProcessState } from "../test/e2e/helpers.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const count = Number(args.find((arg, i) => /^\d+$/.test(arg) && !args[i - 1]?.startsWith("--")) ?? 1000);
const idleSeconds = option("--idle", 60);
const runs = option("--runs", 1);
const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** utime + stime of one process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** RSS and its two parts: anonymous (the heap and what the agent allocates) and file-backed (the binary's mapped pages, shared and reclaimable). */
function rss(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) / 1024;
  return { total: mib("VmRSS"), anon: mib("RssAnon"), file: mib("RssFile") };
}

/** The bench may itself run on the binary (BUN_BE_BUN=1); the agent must not. */
function agentEnv(): NodeJS.ProcessEnv {
  const { BUN_BE_BUN: _, ...env } = process.env;
  return { ...env, TZ: "UTC", NO_COLOR: "1" };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function until(what: string, ready: () => boolean, timeoutMs: number, pollMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

function manifest(i: number): string {
  const name = `sleeper-${String(i).padStart(4, "0")}`;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { containers: [{ name: "app", image: "busybox", command: ["sleep", "3600"] }] },
  });
}

interface AgentFigures {
  runningMs: number;
  rssMiB: number;
  rssAnonMiB: number;
  rssFileMiB: number;
  idleCpuPercent: number;
  /** An idle compiled Bun process (the agent's own binary, BUN_BE_BUN=1) over the same window. */
  idleFloorPercent: number;
  /** SIGTERM of the agent (--stop-pods-on-exit) until it exits: every pod stopped and removed. */
  stopMs: number;
}

async function agentRun(): Promise<AgentFigures> {
  const work = mkdtempSync(join(tmpdir(), "mk-thousand-"));
  const manifests = join(work, "manifests");
  mkdirSync(manifests);
  for (let i = 0; i < count; i++) writeFileSync(join(manifests, `sleeper-${i}.json`), manifest(i));
  const db = join(work, "state.db");
  const started = performance.now();
  const agent = spawn(BINARY, ["run", "--manifests", manifests, "--db", db, "--api-listen", "off", "--max-pods", String(count), "--stop-pods-on-exit"], {
    env: agentEnv(),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  agent.stderr?.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<void>((done) => agent.on("exit", () => done()));
  const pid = agent.pid as number;
  try {
    let reader: Database | undefined;
    const running = () => {
      if (!reader) {
        if (!existsSync(db)) return false;
        try {
          reader = new Database(db, { readonly: true });
        } catch {
          return false;
        }
      }
      try {
        const row = reader.query("SELECT count(*) AS n FROM containers WHERE state = 'running'").get() as { n: number };
        return row.n >= count;
      } catch {
        return false; // not migrated yet
      }
    };
    await until(`${count} running containers`, running, 120_000);
    const runningMs = performance.now() - started;
    reader?.close();
    // Let the start-up's garbage and the first resyncs settle before measuring the idle agent.
    await sleep(3000);
    const memory = rss(pid);
    // The floor, in the same window: the same compiled Bun runtime doing nothing but holding a timer.
    const idleScript = join(work, "idle.js");
    writeFileSync(idleScript, "setInterval(() => {}, 3_600_000);\n");
    const floor = spawn(BINARY, [idleScript], { env: { ...process.env, BUN_BE_BUN: "1" }, stdio: "ignore" });
    await sleep(1000);
    const before = cpuSeconds(pid);
    const floorBefore = cpuSeconds(floor.pid as number);
    await sleep(idleSeconds * 1000);
    const idleCpuPercent = ((cpuSeconds(pid) - before) / idleSeconds) * 100;
    const idleFloorPercent = ((cpuSeconds(floor.pid as number) - floorBefore) / idleSeconds) * 100;
    floor.kill("SIGKILL");
    const stopping = performance.now();
    agent.kill("SIGTERM");
    await exited;
    const stopMs = performance.now() - stopping;
    return { runningMs, rssMiB: memory.total, rssAnonMiB: memory.anon, rssFileMiB: memory.file, idleCpuPercent, idleFloorPercent, stopMs };
  } catch (error) {
    throw new Error(`${(error as Error).message}; agent stderr: ${stderr.slice(-2000)}`);
  } finally {
    // --stop-pods-on-exit stops every container (SIGTERM, grace, SIGKILL) before the agent exits.
    agent.kill("SIGTERM");
    await exited;
    removeProcessState(db);
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The floor: a shell loop launching the same monitor binary with the same arguments the runtime
 * gives it, each in its own session, timed until every container has dropped its `started` marker.
 */
async function floorMonitors(): Promise<{ startMs: number; stopMs: number }> {
  const root = mkdtempSync(join(tmpdir(), "mk-thousand-floor-"));
  const events = join(root, "events");
  mkdirSync(events);
  const monitor = installMonitorBinary(root);
  const gzip = findGzip();
  const flags = `--log-max-bytes ${DEFAULT_LOG_POLICY.maxBytes} --log-max-files ${DEFAULT_LOG_POLICY.maxFiles}${gzip ? ` --gzip ${gzip}` : ""}`;
  const dirs = Array.from({ length: count }, (_, i) => join(root, "c", `c${i}`));
  const loop = `
for i in $(seq 0 $(($1 - 1))); do
  d="$2/c/c$i"; mkdir -p "$d"
  setsid ${monitor} --dir "$d" --events "$2/events" --id "c$i" --log "$d/container.log" ${flags} -- sleep 3600 </dev/null >/dev/null 2>&1 &
done`;
  const started = performance.now();
  spawnSync("/bin/sh", ["-c", loop, "floor", String(count), root]);
  await until("the floor's containers", () => readdirSync(events).length >= count, 120_000, 5);
  const startMs = performance.now() - started;
  const stopping = performance.now();
  for (const dir of dirs) {
    const pid = Number(readFileSync(join(dir, "pid"), "utf8").split(" ")[0]);
    killGroup(pid);
  }
  await until("the floor's monitors to record the exits", () => dirs.every((dir) => existsSync(join(dir, "exit"))), 30_000, 50);
  rmSync(root, { recursive: true, force: true });
  return { startMs, stopMs: performance.now() - stopping };
}

/** The bare floor: N `sleep` processes, each in its own session (through `sh -c exec`), from one shell loop. */
async function floorSleeps(): Promise<number> {
  const pidFile = join(mkdtempSync(join(tmpdir(), "mk-thousand-sleeps-")), "pids");
  writeFileSync(pidFile, "");
  // setsid forks when it happens to lead its process group, so $! may not be the sleep: each
  // reports its own pid ($$ survives the exec) for the clean-up.
  const loop = `for i in $(seq 1 "$1"); do setsid /bin/sh -c 'echo $$ >>"$0"; exec sleep 3600' "$2" </dev/null >/dev/null 2>&1 & done`;
  const started = performance.now();
  spawnSync("/bin/sh", ["-c", loop, "floor", String(count), pidFile]);
  const pids = () => readFileSync(pidFile, "utf8").trim().split("\n").filter(Boolean).map(Number);
  await until("the bare sleeps", () => pids().length >= count, 60_000, 5);
  const ms = performance.now() - started;
  for (const pid of pids()) killGroup(pid);
  rmSync(join(pidFile, ".."), { recursive: true, force: true });
  return ms;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

ensureBinary();
const agents: AgentFigures[] = [];
const monitors: { startMs: number; stopMs: number }[] = [];
const sleeps: number[] = [];
for (let run = 0; run < runs; run++) {
  sleeps.push(await floorSleeps());
  monitors.push(await floorMonitors());
  agents.push(await agentRun());
  const a = agents.at(-1) as AgentFigures;
  console.log(
    `run ${run + 1}: all ${count} running ${(a.runningMs / 1000).toFixed(2)} s (floor: same monitors from a shell loop ${(monitors.at(-1)!.startMs / 1000).toFixed(2)} s, bare setsid sleep ${((sleeps.at(-1) as number) / 1000).toFixed(2)} s)` +
      ` | agent RSS ${a.rssMiB.toFixed(1)} MiB (anonymous ${a.rssAnonMiB.toFixed(1)}, file-backed ${a.rssFileMiB.toFixed(1)}) | idle agent CPU ${a.idleCpuPercent.toFixed(2)} % of a core over ${idleSeconds} s (floor: an idle compiled Bun process, same window: ${a.idleFloorPercent.toFixed(2)} %)` +
      ` | all stopped and removed ${(a.stopMs / 1000).toFixed(2)} s (floor: the same monitors' groups killed and their exits recorded ${(monitors.at(-1)!.stopMs / 1000).toFixed(2)} s, their directories then removed)`,
  );
}
if (runs > 1) {
  console.log(
    `median of ${runs}: all running ${(median(agents.map((a) => a.runningMs)) / 1000).toFixed(2)} s vs floor ${(median(monitors.map((m) => m.startMs)) / 1000).toFixed(2)} s (bare ${(median(sleeps) / 1000).toFixed(2)} s)` +
      ` | RSS ${median(agents.map((a) => a.rssMiB)).toFixed(1)} MiB | idle CPU ${median(agents.map((a) => a.idleCpuPercent)).toFixed(2)} % (idle Bun ${median(agents.map((a) => a.idleFloorPercent)).toFixed(2)} %)` +
      ` | all stopped ${(median(agents.map((a) => a.stopMs)) / 1000).toFixed(2)} s vs floor ${(median(monitors.map((m) => m.stopMs)) / 1000).toFixed(2)} s`,
  );
}
console.log("targets (issue 36): all running within 1.3x the bare sleeps, agent RSS <= 100 MiB, idle CPU <= 1 % of a core; the machine's 2 cores are shared, so repeat and take medians");
