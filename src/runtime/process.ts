/**
 * The plain-process runtime: no images, no namespaces; each container attempt is a process in a
 * session of its own, held by a /bin/sh monitor (process-monitor.ts) that outlives the agent.
 * All state lives in files under `rootDir` (process-files.ts), so a new agent adopts what an old
 * one started: same ids, same pids, exits recorded while nobody watched.
 *
 * Choices a user can see:
 * - Container ids are `<podUid first 8>-<container>-<attempt>-<6 random hex>`: readable in `ps`
 *   and logs, unique even if an attempt number is reused after lost agent state.
 * - A command that cannot be found is refused up front with ContainerStartError, reason
 *   "StartError" and containerd's wording (`exec: "x": executable file not found in $PATH`). If
 *   the file vanishes between that check and the exec, the container exits 127 instead.
 * - Volumes cannot be mounted (no mount namespace), so `mountPath` is not honoured: the process
 *   finds each mounted volume's host directory in `MINIKUBELET_VOLUME_<NAME>` (upper case, dashes
 *   as underscores). emptyDir lives at `pods/<uid>/volumes/<name>`; hostPath is the path itself.
 * - The default working directory, and HOME when the spec sets none, is the pod directory.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { realClock, type Clock } from "../clock.ts";
import type { ContainerSpec, PodSpec } from "../manifest/types.ts";
import { containerStartProblem } from "../manifest/runtime-rules.ts";
import { containerLabels, isOwnedBy, sandboxLabels } from "./labels.ts";
import {
  ContainerStartError,
  type ContainerConfig,
  type ContainerInfo,
  type ContainerStatus,
  type ExecResult,
  type ExecSession,
  type ExecStreamRequest,
  type LogOptions,
  type PullResult,
  type Runtime,
  type RuntimeEvent,
  type Sandbox,
  type SandboxInfo,
} from "./runtime.ts";
import { ContainerEvents } from "./process-events.ts";
import { execInContainer, killGroup } from "./process-exec.ts";
import { startProcessExec } from "./process-exec-stream.ts";
import {
  ProcessLayout,
  SAFE_NAME,
  ensureDir,
  isSameProcessAlive,
  readExit,
  readJson,
  readPid,
  writeJson,
  writeLostExit,
  type ContainerRecord,
  type SandboxRecord,
} from "./process-files.ts";
import { DEFAULT_PATH, checkExecutable, containerEnv, isDirectory } from "./process-spec.ts";
import { installMonitorScript, launchMonitor, monitorsOf, resolveMonitorTools, type MonitorTools } from "./process-monitor.ts";

import { DEFAULT_LOG_POLICY, type ContainerLogPolicy } from "../logs/rotation-policy.ts";
import { Cgroups, detectHostCgroupMode, limitsFromResources, type CgroupLimits } from "./cgroups.ts";

export { DEFAULT_PATH, volumeEnvName } from "./process-spec.ts";

export interface ProcessRuntimeOptions {
  /** Holds every pod and container directory; created if missing. */
  rootDir: string;
  /** Default: the real clock. Drives the backstop re-check and the start/exec timeouts. */
  clock?: Clock;
  /** Period of the backstop listing of exit markers the directory watch missed. Default 5000 ms. */
  resyncMs?: number;
  /** How long startContainer waits for the monitor to report the process. Default 10000 ms. */
  startTimeoutMs?: number;
  /**
   * The identity of the agent's database (store/identity.ts), written into every record's labels.
   * When set, records without it are neither listed nor removed: the runtime cannot prove it made them.
   */
  owner?: string;
  /** How large each container's log may grow before the monitor rotates it. Default: the kubelet's. */
  logPolicy?: ContainerLogPolicy;
  /** Replaces monitor tools found on PATH (tests slow a monitor's start down this way). */
  monitorTools?: Partial<MonitorTools>;
  /** Default: the host's cgroups, under minikubelet/<owner>. Tests pass a fake tree's. */
  cgroups?: Cgroups;
  /** The most processes each container may have (pids.max; the kubelet's --pod-max-pids). Default: no limit. */
  podPidsLimit?: number;
}

export class ProcessRuntime implements Runtime {
  readonly name = "process" as const;
  /** Exit markers are watched, listed every few seconds, and backed by the monitors' exit callbacks. */
  readonly reportsEveryExit = true;
  private readonly layout: ProcessLayout;
  private readonly clock: Clock;
  private readonly tools: MonitorTools;
  private readonly events: ContainerEvents;
  private readonly startTimeoutMs: number;
  private readonly owner: string | undefined;
  private readonly logPolicy: ContainerLogPolicy;
  private readonly cgroups: Cgroups;
  private readonly podPidsLimit: number | undefined;
  /** Why containers run without resource limits here, or undefined when cgroups can be written. */
  readonly cgroupProblem: string | undefined;
  /** The leftover cgroups of this owner that the start-up sweep removed (their containers are gone). */
  readonly sweptCgroups: string[] = [];
  /** id -> why its limits are not enforced, for the containers that have some and no cgroup. */
  private readonly unenforced = new Map<string, string>();
  /** id -> container directory; filled on start and by scans, so lookups rarely scan. */
  private readonly dirs = new Map<string, string>();

  constructor(options: ProcessRuntimeOptions) {
    this.layout = new ProcessLayout(resolve(options.rootDir));
    this.clock = options.clock ?? realClock;
    this.startTimeoutMs = options.startTimeoutMs ?? 10_000;
    this.owner = options.owner;
    this.logPolicy = options.logPolicy ?? DEFAULT_LOG_POLICY;
    ensureDir(this.layout.podsDir);
    ensureDir(this.layout.eventsDir);
    installMonitorScript(this.layout);
    this.tools = { ...resolveMonitorTools(), ...options.monitorTools };
    this.cgroups = options.cgroups ?? hostCgroups(this.owner);
    this.podPidsLimit = options.podPidsLimit;
    this.cgroupProblem = this.cgroups.prepare();
    // Without an owner the cgroup parent ("unowned") may be shared by several runtimes: nothing there is provably ours.
    if (this.owner !== undefined) {
      const known = new Set(this.layout.scanContainers().map((container) => container.id));
      this.sweptCgroups = this.cgroups.sweep((id) => known.has(id));
    }
    this.events = new ContainerEvents({
      eventsDir: this.layout.eventsDir,
      clock: this.clock,
      resyncMs: options.resyncMs ?? 5000,
      hasExited: (id) => this.readStatus(id).state === "exited",
    });
  }

  async runPodSandbox(pod: PodSpec): Promise<Sandbox> {
    if (!SAFE_NAME.test(pod.uid)) throw new Error(`pod ${pod.key}: uid "${pod.uid}" is not usable as a directory name`);
    const dir = this.layout.podDir(pod.uid);
    ensureDir(join(dir, "containers"));
    for (const volume of pod.volumes) if (volume.type === "emptyDir") ensureDir(this.layout.volumeDir(pod.uid, volume.name));
    const file = join(dir, "sandbox.json");
    if (!existsSync(file)) {
      const record: SandboxRecord = { id: pod.uid, podUid: pod.uid, labels: sandboxLabels(pod, this.owner), createdAt: this.clock.now() };
      writeJson(file, record);
    }
    return { id: pod.uid, ip: "127.0.0.1", podUid: pod.uid };
  }

  async removePodSandbox(id: string): Promise<void> {
    if (!SAFE_NAME.test(id)) return;
    const dir = this.layout.podDir(id);
    if (!existsSync(dir)) return;
    const record = readJson<SandboxRecord>(join(dir, "sandbox.json"));
    if (record && !this.owns(record.labels)) throw new Error(`sandbox ${id} was not created by this agent's database: not removed`);
    for (const entry of this.layout.scanContainers().filter((c) => c.podUid === id)) {
      this.dirs.set(entry.id, entry.dir);
      await this.removeContainer(entry.id);
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }

  async listPodSandboxes(): Promise<SandboxInfo[]> {
    const sandboxes: SandboxInfo[] = [];
    for (const uid of this.layout.scanSandboxes()) {
      const record = readJson<SandboxRecord>(join(this.layout.podDir(uid), "sandbox.json"));
      if (record && this.owns(record.labels)) sandboxes.push({ id: record.id, podUid: record.podUid, ip: "127.0.0.1", labels: record.labels, ready: true });
    }
    return sandboxes;
  }

  async startContainer(config: ContainerConfig): Promise<string> {
    const { container, pod } = config;
    const podUid = config.sandbox.podUid;
    const podDir = this.layout.podDir(podUid);
    const fail = (message: string): never => {
      throw new ContainerStartError(container.name, `container ${container.name}: ${message}`);
    };
    // validate and the file source refuse such a pod already; a checkpointed spec may predate that.
    const problem = containerStartProblem(container, "process");
    if (problem) fail(`${problem.field} is ${problem.message}`);
    if (!existsSync(join(podDir, "sandbox.json"))) fail(`sandbox ${config.sandbox.id} does not exist (runPodSandbox first)`);
    const env = containerEnv({ pod, container, podDir, volumeDir: (name) => this.layout.volumeDir(pod.uid, name) }, fail);
    const workingDir = container.workingDir ? resolve(podDir, container.workingDir) : podDir;
    if (!isDirectory(workingDir)) fail(`chdir to workingDir "${workingDir}": no such directory`);
    const argv = [...container.command, ...container.args];
    checkExecutable(argv[0] as string, env.PATH ?? DEFAULT_PATH, workingDir, fail);
    let limits: CgroupLimits = {};
    try {
      limits = limitsFromResources(container.resources, this.podPidsLimit);
    } catch (error) {
      fail(`resources: ${(error as Error).message}`);
    }

    const id = `${podUid.slice(0, 8)}-${container.name}-${config.attempt}-${randomBytes(3).toString("hex")}`;
    const dir = this.layout.containerDir(podUid, id);
    ensureDir(dir);
    const record: ContainerRecord = {
      id,
      podUid,
      sandboxId: config.sandbox.id,
      name: container.name,
      attempt: config.attempt,
      workingDir,
      env,
      command: argv,
      createdAt: this.clock.now(),
    };
    writeJson(join(dir, "config.json"), record);
    writeJson(join(dir, "labels.json"), containerLabels(config, this.owner));
    writeFileSync(join(dir, "log"), "", { flag: "a" });
    this.dirs.set(id, dir);
    // Without a cgroup the container still runs, unlimited: the agent said why at start-up, and the
    // kubelet records a Warning for the container (unenforcedLimits).
    const cgroup = this.cgroups.create(id, limits);
    if ("problem" in cgroup && Object.keys(limits).length > 0) this.unenforced.set(id, cgroup.problem);

    let monitorGone = false;
    this.events.ownChild(id);
    try {
      launchMonitor({
        layout: this.layout,
        tools: this.tools,
        id,
        containerDir: dir,
        workingDir,
        env,
        argv,
        logPolicy: this.logPolicy,
        cgroupProcs: "procs" in cgroup ? cgroup.procs : [],
        onExit: () => {
          monitorGone = true;
          this.events.monitorExited(id);
        },
      });
    } catch (cause) {
      throw new ContainerStartError(container.name, `container ${container.name}: monitor failed to start`, "StartError", {
        cause,
      });
    }
    const started = await this.events.waitFor(id, () => readPid(dir) !== undefined || monitorGone, this.startTimeoutMs);
    if (!started || readPid(dir) === undefined) {
      const detail = readText(join(dir, "monitor.err")).trim() || `no pid recorded within ${this.startTimeoutMs}ms`;
      fail(`monitor did not start the process: ${detail}`);
    }
    this.events.track(id);
    return id;
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    return this.readStatus(id);
  }

  async killContainer(id: string, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    const dir = this.findDir(id);
    if (!dir || readExit(dir)) return;
    const pid = readPid(dir);
    // The recorded start time guards against signalling a stranger that inherited the pid. Until
    // the process has run setsid it has no group of its own: then it is signalled alone.
    if (pid && isSameProcessAlive(pid.pid, pid.startTicks) && !killGroup(pid.pid, signal)) killQuietly(pid.pid, signal);
  }

  async execSync(id: string, command: string[], timeoutMs: number): Promise<ExecResult> {
    const record = this.runningRecord(id);
    return execInContainer({ argv: command, cwd: record.workingDir, env: record.env, timeoutMs, clock: this.clock });
  }

  async execStream(id: string, request: ExecStreamRequest): Promise<ExecSession> {
    const record = this.runningRecord(id);
    // A process in a container dies with it; this one runs beside it, so it is ended when it exits.
    const containerGone = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, containerGone.signal]) : containerGone.signal;
    const unsubscribe = this.events.subscribe((event) => {
      if (event.type === "exited" && event.containerId === id) containerGone.abort();
    });
    if (this.readStatus(id).state !== "running") containerGone.abort();
    try {
      const session = startProcessExec({ cwd: record.workingDir, env: record.env, clock: this.clock, request: { ...request, signal } });
      void session.exited.finally(unsubscribe);
      return session;
    } catch (error) {
      unsubscribe();
      throw error;
    }
  }

  /** The container's recorded config, for an exec; throws unless the container is running. */
  private runningRecord(id: string): ContainerRecord {
    const dir = this.findDir(id);
    const record = dir && readJson<ContainerRecord>(join(dir, "config.json"));
    if (!dir || !record) throw new Error(`exec in container ${id}: no such container`);
    const state = this.readStatus(id).state;
    if (state !== "running") throw new Error(`exec in container ${id}: container is ${state}, not running`);
    return record;
  }

  async removeContainer(id: string): Promise<void> {
    const dir = this.findDir(id);
    if (!dir) return;
    const labels = readJson<Record<string, string>>(join(dir, "labels.json"));
    if (labels && !this.owns(labels)) throw new Error(`container ${id} was not created by this agent's database: not removed`);
    // A monitor that has not recorded its pid yet may still start the process: it goes first.
    if (this.readStatus(id).state === "created") await this.killMonitors(id, dir);
    const pid = readPid(dir);
    if (this.readStatus(id).state === "running") {
      await this.killContainer(id, "SIGKILL");
    }
    // Let the monitor finish its last writes (exit file, then marker) so nothing is left behind.
    if (pid && !readExit(dir)?.lost) {
      const marker = this.layout.marker(id, "exited");
      await this.events.waitFor(
        id,
        () => existsSync(marker) || !isSameProcessAlive(pid.monitorPid, pid.monitorStartTicks),
        2000,
        20,
      );
    }
    this.cgroups.remove(id);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    rmSync(this.layout.marker(id, "started"), { force: true });
    rmSync(this.layout.marker(id, "exited"), { force: true });
    this.dirs.delete(id);
    this.unenforced.delete(id);
    this.events.forget(id);
  }

  unenforcedLimits(id: string): string | undefined {
    return this.unenforced.get(id);
  }

  async listContainers(): Promise<ContainerInfo[]> {
    const infos: ContainerInfo[] = [];
    for (const { id, dir } of this.layout.scanContainers()) {
      this.dirs.set(id, dir);
      const labels = readJson<Record<string, string>>(join(dir, "labels.json"));
      const record = readJson<ContainerRecord>(join(dir, "config.json"));
      if (!labels || !record || !this.owns(labels)) continue;
      let status = this.readStatus(id);
      // An agent killed right after launching a monitor leaves a container whose process is about to
      // run: wait for the monitor to report rather than take it for one that never ran.
      if (status.state === "created" && monitorsOf(dir).length > 0) {
        await this.events.waitFor(id, () => readPid(dir) !== undefined || readExit(dir) !== undefined || monitorsOf(dir).length === 0, this.startTimeoutMs);
        status = this.readStatus(id);
      }
      if (status.state === "running") this.events.track(id);
      infos.push({ ...status, labels, sandboxId: record.sandboxId });
    }
    return infos;
  }

  async readLogs(id: string, options: LogOptions = {}): Promise<string> {
    const dir = this.findDir(id);
    if (!dir) throw new Error(`logs of container ${id}: no such container`);
    const text = readText(join(dir, "log"));
    if (options.tail === undefined) return text;
    if (options.tail <= 0) return "";
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines.length === 0 ? "" : `${lines.slice(-options.tail).join("\n")}\n`;
  }

  async ensureImage(_container: ContainerSpec): Promise<PullResult> {
    return { pulled: false, durationMs: 0 };
  }

  watch(listener: (event: RuntimeEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  async close(): Promise<void> {
    this.events.close();
    this.cgroups.release();
  }

  /** The backstop pass, for tests: re-checks every container seen running. */
  recheck(): void {
    this.events.recheck();
  }

  private owns(labels: Record<string, string>): boolean {
    return isOwnedBy(labels, { database: this.owner });
  }

  private findDir(id: string): string | undefined {
    const cached = this.dirs.get(id);
    if (cached && existsSync(cached)) return cached;
    this.dirs.delete(id);
    for (const entry of this.layout.scanContainers()) this.dirs.set(entry.id, entry.dir);
    const found = this.dirs.get(id);
    return found && existsSync(found) ? found : undefined;
  }

  /** SIGKILLs the monitors of a container until none is left, so none can start or record anything more. */
  private async killMonitors(id: string, dir: string): Promise<void> {
    for (let pids = monitorsOf(dir); pids.length > 0; pids = monitorsOf(dir)) {
      for (const pid of pids) killQuietly(pid);
      await this.events.waitFor(id, () => monitorsOf(dir).length === 0, 1000, 10);
    }
  }

  private readStatus(id: string): ContainerStatus {
    const dir = this.findDir(id);
    if (!dir) return { id, state: "unknown" };
    const logPath = join(dir, "log");
    const pid = readPid(dir);
    const exited = (): ContainerStatus | undefined => {
      const exit = readExit(dir);
      if (!exit) return undefined;
      // Asked of the kernel, not guessed from the 137 a SIGKILL also gives.
      const oomKilled = !exit.lost && exit.exitCode !== 0 && this.cgroups.oomKilled(id, exit.exitCode);
      return {
        id,
        state: "exited",
        exitCode: exit.exitCode,
        ...(exit.lost ? { reason: "Unknown" } : oomKilled ? { reason: "OOMKilled" } : {}),
        startedAt: pid?.startedAt,
        finishedAt: exit.finishedAt,
        logPath,
      };
    };
    const done = exited();
    if (done) return done;
    if (!pid) return { id, state: "created", logPath };
    const running: ContainerStatus = { id, state: "running", pid: pid.pid, startedAt: pid.startedAt, logPath };
    if (isSameProcessAlive(pid.pid, pid.startTicks)) return running;
    // The process is gone. A live monitor is about to write the exit file; a dead one never will.
    if (isSameProcessAlive(pid.monitorPid, pid.monitorStartTicks)) return running;
    const late = exited();
    if (late) return late;
    writeLostExit(dir, this.clock.now());
    return exited() ?? { id, state: "unknown" };
  }
}

/** The host's cgroups for this agent: its database identity keeps two agents' cgroups apart. */
function hostCgroups(owner: string | undefined): Cgroups {
  const identity = owner ?? "unowned";
  if (!SAFE_NAME.test(identity)) return new Cgroups({ kind: "unavailable", reason: `the identity ${JSON.stringify(identity)} cannot name a cgroup` }, identity);
  return new Cgroups(detectHostCgroupMode(), identity);
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}
