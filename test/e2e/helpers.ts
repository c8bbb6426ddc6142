import { afterEach, beforeAll } from "bun:test";
/**
 * What the end-to-end tests share: the compiled `./minikubelet` (built once when missing or older
 * than the sources), an agent started as a real child process in a temp dir with a pinned env,
 * the query commands run against its database, a read-only look at the database itself, and
 * waits on conditions with a deadline instead of fixed sleeps.
 */
import { Database } from "bun:sqlite";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Cgroups, detectHostCgroupMode } from "../../src/runtime/process/cgroups.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { resolveDbPath, runtimeRootOf } from "../../src/store/db-path.ts";
import { processRuntimeDirs } from "../../src/agent/runtime-choice.ts";
import { ProcessLayout } from "../../src/runtime/process/process-files.ts";

export const ROOT = resolve(import.meta.dir, "../..");
export const BINARY = join(ROOT, "minikubelet");
export const ENV = { ...process.env, TZ: "UTC", NO_COLOR: "1" };

/** The newest modification time under `dir` (recursively), in ms. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** What the binary embeds: a change to any of these makes ./minikubelet stale. */
const EMBEDDED_SOURCES = ["src", "monitor", "migrations", "packaging"];

/** Builds ./minikubelet with ./scripts/build unless it exists and is newer than everything it embeds. */
export function ensureBinary(): string {
  const sources = Math.max(...EMBEDDED_SOURCES.map((dir) => newestMtime(join(ROOT, dir))));
  if (existsSync(BINARY) && statSync(BINARY).mtimeMs >= sources) return BINARY;
  const built = spawnSync(join(ROOT, "scripts/build"), { cwd: ROOT, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`./scripts/build failed (exit ${built.status}): ${built.stderr}`);
  return BINARY;
}

/** A disposable work dir with a manifests folder and the agent's database path. */
export class Workspace {
  readonly path = mkdtempSync(join(tmpdir(), "minikubelet-e2e-"));
  readonly manifests = join(this.path, "manifests");
  readonly db = join(this.path, "state.db");

  constructor() {
    mkdirSync(this.manifests);
  }

  write(file: string, text: string): void {
    writeFileSync(join(this.manifests, file), text);
  }

  remove(file: string): void {
    rmSync(join(this.manifests, file), { force: true });
  }

  /** Runs a query command (`get`, `describe`, `events`, `sql`) of the binary on this database. */
  cli(...args: string[]): string {
    const result = this.run(...args);
    if (result.status !== 0) throw new Error(`minikubelet ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
    return result.stdout;
  }

  /** The same, whatever its exit status, with stderr; `--db` is the workspace's unless given. */
  run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
    const db = args.includes("--db") ? [] : ["--db", this.db];
    const result = spawnSync(BINARY, [...args, ...db], { env: ENV, encoding: "utf8" });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /** One query on a fresh read-only connection (the agent is the only writer). */
  query<T>(sql: string, ...params: (string | number)[]): T[] {
    const db = new Database(this.db, { readonly: true });
    try {
      return db.query(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }

  cleanup(): void {
    // The process runtime's records of each database here, on a tmpfs apart from the workspace (process-files.ts).
    const databases = new Set([this.db, ...listDir(this.path).filter((name) => name.endsWith(".db")).map((name) => join(this.path, name))]);
    for (const db of databases) removeProcessState(db);
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** One `minikubelet run` child process with its output collected. */
export class Agent {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;
  readonly startedAt = Date.now();

  /**
   * `where` overrides the workspace's manifests directory, database and the node (default n1);
   * `wrap` runs the binary through a command that execs it (`prlimit --nofile=...`), so the pid is the agent's.
   */
  constructor(ws: Workspace, extra: string[] = [], where: { manifests?: string; db?: string; node?: string; wrap?: string[] } = {}) {
    // No API unless a test asks for one: agents of parallel tests would all want port 6443.
    const api = extra.includes("--api-listen") ? [] : ["--api-listen", "off"];
    // Nor the kubelet's endpoints: they would all want port 10250.
    const kubelet = extra.includes("--kubelet-listen") ? [] : ["--kubelet-listen", "off"];
    const args = ["run", "--manifests", where.manifests ?? ws.manifests, "--node", where.node ?? "n1", "--db", where.db ?? ws.db, ...api, ...kubelet, ...extra];
    const [command, ...prefix] = [...(where.wrap ?? []), BINARY];
    this.child = spawn(command!, [...prefix, ...args], { env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout!.on("data", (chunk) => (this.stdout += String(chunk)));
    this.child.stderr!.on("data", (chunk) => (this.stderr += String(chunk)));
    this.exited = new Promise((done) => this.child.once("exit", (code) => done(code)));
  }

  /** True once the child has exited (by itself or by a signal). */
  get done(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** kill -9 by the agent's own pid, and waits until it is reaped. */
  async kill9(): Promise<void> {
    if (this.done) return;
    process.kill(this.pid, "SIGKILL");
    await this.exited;
  }

  /** SIGTERM, then the agent's own shutdown (pods keep running unless --stop-pods-on-exit); resolves with the exit code. */
  /**
   * SIGTERM, and SIGKILL after `timeoutMs`. With `hurryAfterMs`, a second SIGTERM then (the agent's
   * exit at once: it gives up its node lock and leaves its pods), for a test whose pods would wait out
   * long grace periods and which removes their containers itself.
   */
  async terminate(timeoutMs = 20_000, hurryAfterMs?: number): Promise<number | null> {
    if (this.done) return this.child.exitCode;
    process.kill(this.pid, "SIGTERM");
    const hurry = hurryAfterMs === undefined ? undefined : setTimeout(() => !this.done && process.kill(this.pid, "SIGTERM"), hurryAfterMs);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
      clearTimeout(hurry);
    }
  }

  /**
   * Arms a `kill -9` sent from the output handler itself the moment the agent prints its `nth`
   * line matching `pattern`: the closest a test gets to killing it between an action and the
   * checkpoint of that pass. Resolves once the agent is reaped; `undefined` if it exited first.
   */
  killOn(pattern: RegExp, nth = 1): Promise<string | undefined> {
    let seen = 0;
    let partial = "";
    let line: string | undefined;
    const onData = (chunk: unknown) => {
      const lines = (partial + String(chunk)).split("\n");
      partial = lines.pop()!;
      for (const text of lines) {
        if (!pattern.test(text) || ++seen !== nth || this.done) continue;
        process.kill(this.pid, "SIGKILL");
        line = text;
        this.child.stdout!.off("data", onData);
        return;
      }
    };
    this.child.stdout!.on("data", onData);
    return this.exited.then(() => line);
  }

  /** Resolves once the agent has printed a line containing `text`. */
  async waitForOutput(text: string, timeoutMs = 10_000): Promise<void> {
    await waitFor(`agent output to contain ${JSON.stringify(text)}`, () => this.stdout.includes(text), timeoutMs, () => this.stdout + this.stderr);
  }
}

/**
 * Polls `condition` every 50 ms until it returns a truthy value (which is returned) or the deadline
 * passes; the error names what was awaited and, with `detail`, what the world looked like.
 */
export async function waitFor<T>(what: string, condition: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000, detail?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const extra = detail ? `\n${detail()}` : "";
      const cause = lastError ? ` (last error: ${(lastError as Error).message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}${extra}`);
    }
    await Bun.sleep(50);
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** The state letter of /proc/<pid>/stat, or undefined when there is no such process. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2, stat.lastIndexOf(") ") + 3);
  } catch {
    return undefined;
  }
}

/** True while `pid` runs; a zombie (exited, not yet reaped by pid 1) counts as gone. */
export function isRunning(pid: number): boolean {
  const state = procState(pid);
  return state !== undefined && state !== "Z" && state !== "X";
}

/** Live processes whose command line mentions `text` (the work dir shows up in every monitor's). */
export function processesMentioning(text: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue;
    }
    if (cmdline.includes(text) && isRunning(pid)) found.push({ pid, cmdline });
  }
  return found;
}

/** One container attempt as the process runtime keeps it on disk. */
export interface ProcessContainer {
  podUid: string;
  /** The pod's full name, from the container's labels. */
  podName: string;
  id: string;
  name: string;
  attempt: number;
  /** The container's main process, when its pid file exists. */
  pid?: number;
  /** Whether the runtime has an exit record for it. */
  exited: boolean;
  /** The identity of the database whose agent created it (its io.minikubelet.database label). */
  database?: string;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The process runtime's layout for the agent of database `db`, as the agent derives it. */
export function processLayoutOf(db: string): ProcessLayout {
  const dbPath = resolveDbPath(db);
  const { rootDir, stateDir } = processRuntimeDirs(runtimeRootOf(dbPath), dbPath);
  return new ProcessLayout(rootDir, stateDir);
}

/** Removes the process runtime's records of database `db` where they are kept apart from its runtime root (on a tmpfs). */
export function removeProcessState(db: string): void {
  const { rootDir, stateDir } = processLayoutOf(db);
  if (stateDir !== rootDir) rmSync(dirname(stateDir), { recursive: true, force: true });
}

/** Every container attempt of the database `db` (default the workspace's), read off the runtime's directories. */
export function processContainers(ws: Workspace, db = ws.db): ProcessContainer[] {
  const found: ProcessContainer[] = [];
  // The agent creates and removes these directories while we read: the layout's scans skip what
  // they cannot list, and a record gone meanwhile is skipped here.
  for (const { podUid, id, dir } of processLayoutOf(db).scanContainers()) {
    let labels: Record<string, string> = {};
    try {
      labels = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).labels ?? {};
    } catch {
      continue; // being created or removed
    }
    let pid: number | undefined;
    try {
      pid = Number(readFileSync(join(dir, "pid"), "utf8").trim().split(/\s+/)[0]);
    } catch {
      pid = undefined;
    }
    found.push({
      podUid,
      podName: labels[LABEL.podName] ?? "",
      id,
      name: labels[LABEL.containerName] ?? "",
      attempt: Number(labels[LABEL.attempt] ?? -1),
      pid,
      exited: existsSync(join(dir, "exit")),
      database: labels[LABEL.database],
    });
  }
  return found;
}

export interface ContainerRow {
  pod: string;
  name: string;
  state: string;
  restart_count: number;
  ready: number;
  container_id: string;
}
export interface AttemptRow {
  container: string;
  attempt: number;
  runtime_id: string;
  started_at: number | null;
  finished_at: number | null;
}
export interface EventRow {
  pod: string;
  reason: string;
  message: string;
  count: number;
  first_at: number;
}

/** The containers table of live pods, ordered by container name. */
export function containerRows(ws: Workspace): ContainerRow[] {
  return ws.query<ContainerRow>(
    "SELECT p.name AS pod, c.name, c.state, c.restart_count, c.ready, c.container_id FROM containers c JOIN pods p ON p.uid = c.pod_uid WHERE p.deleted_at IS NULL ORDER BY c.name",
  );
}

/** One container's attempts (all pods), in order. */
export function attemptRows(ws: Workspace, container: string): AttemptRow[] {
  return ws.query<AttemptRow>("SELECT container, attempt, runtime_id, started_at, finished_at FROM attempts WHERE container = ? ORDER BY attempt", container);
}

export function eventRows(ws: Workspace): EventRow[] {
  return ws.query<EventRow>("SELECT pod, reason, message, count, first_at FROM events");
}

/** The back-off wait (ms) recorded for a container name, if any. */
export function backoffDelay(ws: Workspace, container: string): number | undefined {
  return ws.query<{ delay_ms: number }>("SELECT delay_ms FROM backoff WHERE key LIKE ?", `%/${container}`)[0]?.delay_ms;
}

/** `get pods -n NS` rows as { NAME: [READY, STATUS, RESTARTS] }, the restarts without their "(2s ago)". */
export function podTable(ws: Workspace, namespace: string): Record<string, [string, string, string]> {
  const rows: Record<string, [string, string, string]> = {};
  for (const line of ws.cli("get", "pods", "-n", namespace).trim().split("\n").slice(1)) {
    const [name, ready, status, restarts] = line.split(/\s+/);
    if (name) rows[name] = [ready!, status!, restarts!];
  }
  return rows;
}

/**
 * SIGKILLs every container process (its process group) and monitor recorded in a `pid` file under
 * `dir` (any runtime root there), each only while it is the very process recorded (same start time).
 */
/** SIGKILL, for teardown: a process that ended between its listing and the kill is what was wanted. */
function killIfAlive(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * SIGKILLs every container, and its monitor, whose pid file is under `dir` or under the process
 * runtime's records of a database found there (kept on a tmpfs apart from it, process-files.ts).
 */
export function killRecordedContainers(dir: string): void {
  const visit = (path: string) => {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (entry.name.endsWith(".db")) {
        const { rootDir, stateDir } = processLayoutOf(child);
        if (stateDir !== rootDir) visit(stateDir);
      } else if (entry.name === "pid") {
        const [pid, ticks, , monitorPid, monitorTicks] = readFileSync(child, "utf8").trim().split(/\s+/);
        for (const [target, recorded] of [[Number(pid), ticks], [Number(monitorPid), monitorTicks]] as const) {
          if (!isRunning(target) || startTicks(target) !== recorded) continue;
          try {
            process.kill(-target, "SIGKILL");
          } catch {
            killIfAlive(target);
          }
        }
      }
    }
  };
  visit(dir);
}

function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/**
 * The lifecycle every process-runtime e2e file needs: the binary built once, and after each test its
 * agents terminated, any process left under its workspace killed, the workspace removed.
 */
export function processE2E(): { ws: Workspace | undefined; agents: Agent[] } {
  const state: { ws: Workspace | undefined; agents: Agent[] } = { ws: undefined, agents: [] };
  beforeAll(() => {
    ensureBinary();
  });
  afterEach(async () => {
    for (const agent of state.agents.splice(0)) await agent.terminate();
    // Pods outlive a SIGTERM'd agent; their processes need not mention the workspace (exec sleep).
    if (state.ws) killRecordedContainers(state.ws.path);
    for (const left of processesMentioning(state.ws?.path ?? "\0")) killIfAlive(left.pid);
    if (state.ws) await removeCgroupsOf(state.ws);
    state.ws?.cleanup();
    state.ws = undefined;
  });
  return state;
}

/**
 * Removes the host cgroups of the workspace's containers (pods outlive their agent, and the
 * workspace's database goes with the test, so no agent would ever remove them). A process killed
 * just before may hold its cgroup for a moment: each is tried again for up to 2 s.
 */
async function removeCgroupsOf(ws: Workspace): Promise<void> {
  const mode = detectHostCgroupMode();
  if (mode.kind === "unavailable") return;
  const byDatabase = new Map<string, string[]>();
  for (const container of processContainers(ws)) {
    if (container.database) byDatabase.set(container.database, [...(byDatabase.get(container.database) ?? []), container.id]);
  }
  for (const [database, ids] of byDatabase) {
    const cgroups = new Cgroups(mode, database);
    const root = mode.kind === "v1" ? mode.memory : mode.root;
    for (const id of ids) {
      for (let tries = 0; tries < 40 && existsSync(join(root, "minikubelet", database, id)); tries++) {
        cgroups.remove(id);
        if (existsSync(join(root, "minikubelet", database, id))) await new Promise((done) => setTimeout(done, 50));
      }
    }
    cgroups.release();
  }
}

/** The container lines of a pod that sleeps: what a process-runtime e2e pod usually runs. */
export const SLEEP_COMMAND = '      command: ["sleep", "600"]';

/**
 * A one-container pod in namespace e2e with a 1 s grace period; `lines` are the container's fields
 * after its image (SLEEP_COMMAND, resources ...), indented as a container's.
 */
export function e2ePodManifest(name: string, lines: string = SLEEP_COMMAND): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: busybox
${lines}
`;
}

/**
 * A busybox httpd pod for the docker runtime, ready through an HTTP probe on 8080. `script` starts
 * the server; it is the only part the docker e2e files vary (how it meets SIGTERM).
 */
export function busyboxWebManifest(namespace: string, image: string, script: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: web
      image: ${image}
      imagePullPolicy: Never
      command: ["sh", "-c", ${JSON.stringify(script)}]
      readinessProbe:
        httpGet: {path: /index.html, port: 8080}
        periodSeconds: 1
`;
}

