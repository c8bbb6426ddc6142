/**
 * What the latency benches share: containers that stamp the wall clock themselves (bash's
 * $EPOCHREALTIME, a builtin, so taking the stamp costs no process), the compiled agent run as a
 * child on a temp directory, and percentiles. A container's "first instruction" is its first
 * stamp: the agent's work ends where the container's own begins, and the floor measured beside
 * it (a shell doing the same pair) pays the same bash start-up.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { removeProcessState } from "../test/e2e/helpers.ts";

export const ROOT = resolve(import.meta.dir, "..");
/** The agent under test: ./minikubelet, or another build to compare with (MINIKUBELET_BINARY=/path). */
export const BINARY = process.env.MINIKUBELET_BINARY ?? join(ROOT, "minikubelet");

/**
 * The container: stamps `s`, then, on its first run, waits for the bench's trigger (EOF on a fifo),
 * stamps `e` and crashes; on a later run it sleeps (or, as the floor's second run, ends). In mode
 * `loop` it crashes that way on each of its first LOOP_CRASHES runs.
 * Arguments: STAMPFILE FIFO MODE (crash | floor | sleep | loop).
 */
export const LOOP_CRASHES = 3;
export const CONTAINER_SCRIPT = `echo "s $EPOCHREALTIME" >>"$1"
if [ "$3" = loop ]; then
  [ "$(grep -c '^s' "$1")" -gt ${LOOP_CRASHES} ] && exec sleep 3600
elif [ "$3" = sleep ] || [ -e "$1.crashed" ]; then
  [ "$3" = floor ] && exit 0
  exec sleep 3600
fi
: >"$1.crashed"
read -r _ <"$2"
echo "e $EPOCHREALTIME" >>"$1"
exit 1
`;

export class BenchDir {
  readonly path = mkdtempSync(join(tmpdir(), "minikubelet-bench-"));
  readonly manifests = join(this.path, "manifests");
  readonly stamps = join(this.path, "stamps");
  readonly staging = join(this.path, "staging");
  readonly script = join(this.path, "container.sh");
  readonly fifo = join(this.path, "trigger");

  constructor() {
    for (const dir of [this.manifests, this.stamps, this.staging]) mkdirSync(dir);
    writeFileSync(this.script, CONTAINER_SCRIPT);
    spawnSync("mkfifo", [this.fifo]);
  }

  stampFile(name: string): string {
    return join(this.stamps, name);
  }

  /** The stamps a container wrote, in order: `s` (started) and `e` (about to exit), in ms since the epoch. */
  readStamps(name: string): { kind: string; ms: number }[] {
    const file = this.stampFile(name);
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => {
        const [kind, seconds] = line.split(" ");
        return { kind: kind!, ms: Number(seconds) * 1000 };
      });
  }

  /** Writes a pod manifest beside the directory, then renames it in: the file appears whole. */
  renameIn(file: string, text: string): void {
    this.stage(file, text)();
  }

  /** Writes a pod manifest beside the directory; the returned function renames it in. */
  stage(file: string, text: string): () => void {
    const staged = join(this.staging, file);
    writeFileSync(staged, text);
    return () => renameSync(staged, join(this.manifests, file));
  }

  /** Ends every reader of the trigger fifo at once (EOF); false when nobody waits on it yet. */
  trigger(): boolean {
    let fd: number;
    try {
      fd = openSync(this.fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch {
      return false;
    }
    closeSync(fd);
    return true;
  }

  cleanup(): void {
    removeProcessState(join(this.path, "state.db"));
    rmSync(this.path, { recursive: true, force: true });
  }
}

export function podManifest(name: string, dir: BenchDir, mode: "crash" | "sleep" | "loop"): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: bench}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: c
      image: bash
      command: ["bash", "${dir.script}", "${dir.stampFile(name)}", "${dir.fifo}", "${mode}"]
`;
}

/** `minikubelet run` on the bench directory, its event lines counted as they come. */
export class BenchAgent {
  readonly child: ChildProcess;
  private output = "";
  /** What the agent wrote to stderr (its log lines; MK_TRACE lines when profiling). */
  errors = "";

  /** `wrap` runs the binary through a command that execs it (`prlimit --nofile=...`). */
  constructor(dir: BenchDir, extra: string[] = [], wrap: string[] = []) {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run ./scripts/build first`);
    // --stop-pods-on-exit: a bench leaves no container behind (by default pods outlive the agent).
    const api = extra.includes("--api-listen") ? [] : ["--api-listen", "off"];
    const args = ["run", "--manifests", dir.manifests, "--db", join(dir.path, "state.db"), ...api, "--stop-pods-on-exit", ...extra];
    const [command, ...prefix] = [...wrap, BINARY];
    this.child = spawn(command!, [...prefix, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    this.child.stdout!.on("data", (chunk) => (this.output += String(chunk)));
    this.child.stderr!.on("data", (chunk) => (this.errors += String(chunk)));
  }

  count(text: string): number {
    return this.output.split(text).length - 1;
  }

  async stop(): Promise<void> {
    const exited = new Promise((done) => this.child.once("exit", done));
    this.child.kill("SIGTERM");
    await exited;
  }
}

/** Polls until `ready()` (every 5 ms: the bench's own waits must not blur what it measures, which the stamps do). */
export async function until(what: string, ready: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/** Nearest-rank percentile of `values` (ms). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function summary(values: number[]): string {
  const f = (ms: number) => `${ms.toFixed(1).padStart(6)} ms`;
  return `p50 ${f(percentile(values, 50))}  p99 ${f(percentile(values, 99))}  max ${f(Math.max(...values))}  (n=${values.length})`;
}

/**
 * Crashes every program in `names` together, `crashes` times (each time once all have started and
 * reached the fifo), and returns each one's gap: its last crash stamp to the first stamp of the run
 * after it.
 */
export async function crashTogether(dir: BenchDir, names: string[], crashes = 1): Promise<number[]> {
  const stamped = (name: string, kind: string) => dir.readStamps(name).filter((s) => s.kind === kind).length;
  for (let crash = 1; crash <= crashes; crash++) {
    await until(`every program's start ${crash}`, () => names.every((n) => stamped(n, "s") >= crash));
    await Bun.sleep(200);
    await until(`every program's crash ${crash}`, () => {
      if (names.every((n) => stamped(n, "e") >= crash)) return true;
      dir.trigger();
      return false;
    });
  }
  await until("every program's start after its last crash", () => names.every((n) => stamped(n, "s") > crashes));
  return names.map((name) => {
    const stamps = dir.readStamps(name);
    return stamps.filter((s) => s.kind === "s")[crashes]!.ms - stamps.filter((s) => s.kind === "e")[crashes - 1]!.ms;
  });
}

/**
 * Restarts on one agent: each round renames `count` new pods in, crashes them together and removes
 * them. By default the first restart (which the kubelet makes at once); `loop` measures the restart
 * after the LOOP_CRASHES-th crash instead, under the agent `flags` (a short back-off), by when a
 * restart also replaces the dead container kept before.
 */
export async function agentRestarts(count: number, rounds: number, options: { loop?: boolean; flags?: string[] } = {}): Promise<number[]> {
  const dir = new BenchDir();
  const agent = new BenchAgent(dir, options.flags ?? []);
  const gaps: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const names = Array.from({ length: count }, (_, i) => `r${round}-p${i}`);
      for (const name of names) dir.renameIn(`${name}.yaml`, podManifest(name, dir, options.loop ? "loop" : "crash"));
      gaps.push(...(await crashTogether(dir, names, options.loop ? LOOP_CRASHES : 1)));
      const removed = agent.count("PodRemoved");
      for (const name of names) rmSync(join(dir.manifests, `${name}.yaml`));
      await until("the round's pods to be removed", () => agent.count("PodRemoved") >= removed + count);
    }
  } finally {
    await agent.stop();
    dir.cleanup();
  }
  return gaps;
}
