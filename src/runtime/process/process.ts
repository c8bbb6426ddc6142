/**
 * The plain-process runtime: no images, no namespaces; each container attempt is a process in a
 * session of its own, held by a compiled monitor (process-monitor.ts) that outlives the agent.
 * All state lives in files under `rootDir` and `stateDir` (process-files.ts), so a new agent adopts
 * what an old one started: same ids, same pids, exits recorded while nobody watched.
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
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { realClock, type Clock } from "../../clock.ts";
import type { ContainerSpec, PodSpec, ResourceRequirements } from "../../manifest/types.ts";
import { DEFAULT_TERMINATION_MESSAGE_PATH } from "../../manifest/defaults.ts";
import type {
  AttachRequest,
  AttachSession,
  AttachSupport,
  ContainerConfig,
  ContainerInfo,
  ContainerStatus,
  ContainerUsage,
  ExecResult,
  ExecSession,
  ExecStreamRequest,
  LogOptions,
  ImageUser,
  PullResult,
  Runtime,
  RuntimeEvent,
  Sandbox,
  SandboxInfo,
} from "../runtime.ts";
import { ContainerNotFoundError } from "../runtime.ts";
import { ContainerEvents } from "./process-events.ts";
import { execInContainer } from "./process-exec.ts";
import { attachProcessContainer, processAttachSupport } from "./process-attach.ts";
import { startExecBeside } from "./process-exec-stream.ts";
import { ProcessLayout, SAFE_NAME, ensureDir, readExit, readJson, readPid, readText, type ContainerDirEntry, type ContainerRecord } from "./process-files.ts";
import { createContainerDir } from "./process-create.ts";
import { ProcessOwnership, refusal } from "./process-ownership.ts";
import { ProcessSandboxes } from "./process-sandboxes.ts";
import { readContainerStatus } from "./process-status.ts";
import { launchContainer } from "./process-launch.ts";
import { removeContainerFiles, signalContainer } from "./process-remove.ts";
import { enterArgv, findGzip, monitorsOf, type MonitorTools } from "./process-monitor.ts";
import { installMonitorBinary } from "./monitor-binary.ts";
import { DEFAULT_LOG_POLICY, type ContainerLogPolicy } from "../log-rotation-policy.ts";
import { Cgroups, detectHostCgroupMode, limitsFromResources } from "./cgroups.ts";
import type { SignalName } from "../../manifest/signals.ts";
import { readCgroupUsage } from "./cgroup-usage.ts";
import { containerLogFilesSize, containerLogPath, decodeCriLog, isCriLogPath } from "../container-log-file.ts";

export { DEFAULT_PATH, volumeEnvName } from "./process-spec.ts";

export interface ProcessRuntimeOptions {
  /** Holds the monitor binary and every pod's working directory, volumes and logs; created if missing. */
  rootDir: string;
  /** Holds the records a start and an exit write (process-files.ts), best on a tmpfs; created if missing. Default: `rootDir`. */
  stateDir?: string;
  /** Default: the real clock. Drives the start/exec timeouts and the once-a-minute look at adopted monitors. */
  clock?: Clock;
  /** How long startContainer waits for the monitor to report the process. Default 10000 ms. */
  startTimeoutMs?: number;
  /**
   * The identity of the agent's database (store/identity.ts), written into every record's labels.
   * When set, records without it are neither listed nor removed: the runtime cannot prove it made them.
   */
  owner?: string;
  /** How large each container's log may grow before the monitor rotates it. Default: the kubelet's. */
  logPolicy?: ContainerLogPolicy;
  /** Replaces what the monitor is run with (tests hold a monitor's start back with a launcher). */
  monitorTools?: Partial<MonitorTools>;
  /** Default: the host's cgroups, under minikubelet/<owner>. Tests pass a fake tree's. */
  cgroups?: Cgroups;
  /** The most processes each container may have (pids.max; the kubelet's --pod-max-pids). Default: no limit. */
  podPidsLimit?: number;
  /**
   * Where the runtime says what it leaves alone and why: a directory whose config.json (its labels) or
   * sandbox.json cannot be read (process-ownership.ts), once per directory. Default: nowhere.
   */
  log?: (message: string) => void;
}

export class ProcessRuntime implements Runtime {
  readonly name = "process" as const;
  /** Exit markers are watched, listed every few seconds, and backed by the monitors' exit callbacks. */
  private readonly layout: ProcessLayout;
  private readonly clock: Clock;
  private readonly tools: MonitorTools;
  private readonly events: ContainerEvents;
  private readonly startTimeoutMs: number;
  private readonly owner: string | undefined;
  private readonly logPolicy: ContainerLogPolicy;
  private readonly cgroups: Cgroups;
  private readonly podPidsLimit: number | undefined;
  private readonly ownership: ProcessOwnership;
  private readonly sandboxes: ProcessSandboxes;
  /** Why containers run without resource limits here, or undefined when cgroups can be written. */
  readonly cgroupProblem: string | undefined;
  /** The leftover cgroups of this owner that the start-up sweep removed (their containers are gone). */
  readonly sweptCgroups: string[] = [];
  /** id -> why its limits are not enforced, for the containers that have some and no cgroup. */
  private readonly unenforced = new Map<string, string>();
  /** id -> why its volumes are not at their mountPath. */
  private readonly mountProblems = new Map<string, string>();
  /** id -> container directory; filled on start and by scans, so lookups rarely scan. */
  private readonly dirs = new Map<string, ContainerDirEntry>();
  /** Container directory -> when its lost exit was noticed, while the disk cannot take the record (process-status.ts). */
  private readonly unwrittenExits = new Map<string, number>();

  constructor(options: ProcessRuntimeOptions) {
    this.layout = new ProcessLayout(resolve(options.rootDir), resolve(options.stateDir ?? options.rootDir));
    this.clock = options.clock ?? realClock;
    this.startTimeoutMs = options.startTimeoutMs ?? 10_000;
    this.owner = options.owner;
    this.logPolicy = options.logPolicy ?? DEFAULT_LOG_POLICY;
    ensureDir(this.layout.podsDir);
    ensureDir(this.layout.statePodsDir);
    ensureDir(this.layout.eventsDir);
    this.layout.tighten();
    this.tools = { monitor: installMonitorBinary(this.layout.rootDir), gzip: findGzip(), ...options.monitorTools };
    this.cgroups = options.cgroups ?? hostCgroups(this.owner);
    this.podPidsLimit = options.podPidsLimit;
    this.cgroupProblem = this.cgroups.prepare();
    // Without an owner the cgroup parent ("unowned") may be shared by several runtimes: nothing there is provably ours.
    if (this.owner !== undefined) {
      const known = new Set(this.layout.scanContainers().map((container) => container.id));
      this.sweptCgroups = this.cgroups.sweep((id) => known.has(id));
    }
    this.events = new ContainerEvents({
      eventsDirs: this.layout.eventsDirs(),
      clock: this.clock,
      hasExited: (id) => this.readStatus(id).state === "exited",
    });
    this.ownership = new ProcessOwnership({ owner: this.owner, log: options.log ?? (() => {}) });
    this.sandboxes = new ProcessSandboxes({
      layout: this.layout,
      clock: this.clock,
      owner: this.owner,
      ownership: this.ownership,
      removeContainer: (container) => {
        this.dirs.set(container.id, container);
        return this.removeContainer(container.id);
      },
    });
  }

  async runPodSandbox(pod: PodSpec): Promise<Sandbox> {
    return this.sandboxes.run(pod);
  }

  async removePodSandbox(id: string): Promise<void> {
    return this.sandboxes.remove(id);
  }

  podVolumeDir(pod: PodSpec, volumeName: string): string {
    return this.layout.volumeDir(pod.uid, volumeName);
  }

  async listPodSandboxes(): Promise<SandboxInfo[]> {
    return this.sandboxes.list();
  }

  /** The host's loopback: a process pod has no network of its own. */
  portForwardAddress(_sandbox: Sandbox, port: number): { host: string; port: number } {
    return { host: "127.0.0.1", port };
  }

  /** The volume's directory (a tmpfs mounted there for a memory medium counts the same way). */
  emptyDirPath(podUid: string, volume: string): string {
    return this.layout.volumeDir(podUid, volume);
  }

  async startContainer(config: ContainerConfig): Promise<string> {
    const created = createContainerDir({ layout: this.layout, config, owner: this.owner, podPidsLimit: this.podPidsLimit, clock: this.clock });
    const { id, dir, limits } = created;
    this.dirs.set(id, { podUid: config.sandbox.podUid, id, dir });
    // Without a cgroup the container still runs, unlimited: the agent said why at start-up, and the
    // kubelet records a Warning for the container (unenforcedLimits).
    const cgroup = this.cgroups.create(id, limits);
    if ("problem" in cgroup && Object.keys(limits).length > 0) this.unenforced.set(id, cgroup.problem);
    if (created.mountProblem) this.mountProblems.set(id, created.mountProblem);
    await launchContainer({
      layout: this.layout,
      tools: this.tools,
      events: this.events,
      logPolicy: this.logPolicy,
      startTimeoutMs: this.startTimeoutMs,
      name: config.container.name,
      created,
      cgroupJoin: "join" in cgroup ? cgroup.join : [],
    });
    this.events.track(id);
    return id;
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    return this.readStatus(id);
  }

  /** Signals only a container provably ours; any other is one this runtime may not act on (ContainerNotFoundError). */
  async killContainer(id: string, signal: SignalName): Promise<void> {
    const dir = this.findDir(id);
    if (!dir) return;
    const why = refusal(`container ${id}`, this.ownership.container(dir));
    if (why !== undefined) throw new ContainerNotFoundError(`${why}: not signalled, its processes left running`);
    signalContainer(id, dir, signal);
  }

  /** An exec here is no child of the container: one given up (`signal`) is killed, or it would outlive the container's stop. */
  async execSync(id: string, command: string[], timeoutMs: number, signal?: AbortSignal): Promise<ExecResult> {
    const record = this.runningRecord(id);
    return execInContainer({ argv: this.execArgv(id, record, command), cwd: record.workingDir, env: record.env, timeoutMs, clock: this.clock, ...(signal && { signal }) });
  }

  async execStream(id: string, request: ExecStreamRequest): Promise<ExecSession> {
    const record = this.runningRecord(id);
    const target = {
      onExit: (onExit: () => void) =>
        this.events.subscribe((event) => {
          if (event.type === "exited" && event.containerId === id) onExit();
        }),
      isRunning: () => this.readStatus(id).state === "running",
    };
    return startExecBeside(target, { cwd: record.workingDir, env: record.env, clock: this.clock, request: { ...request, command: this.execArgv(id, record, request.command) } });
  }

  attachSupport(request: { stdin: boolean; tty: boolean }): AttachSupport {
    return processAttachSupport(request);
  }

  async attachContainer(id: string, request: AttachRequest): Promise<AttachSession> {
    const dir = this.findDir(id);
    if (!dir) throw new Error(`attach to container ${id}: no such container`);
    if (this.readStatus(id).state !== "running") throw new Error(`attach to container ${id}: container is not running`);
    return attachProcessContainer(id, dir, request);
  }

  /** An exec runs where the container runs and as it runs: in its namespaces, as its user, with its capabilities. */
  private execArgv(id: string, record: ContainerRecord, command: string[]): string[] {
    const isolated = record.binds?.length || record.identity || record.readOnlyRoot || record.hostname !== undefined;
    const pid = isolated ? this.readStatus(id).pid : undefined;
    return pid === undefined ? command : enterArgv(this.tools.monitor, pid, record.workingDir, record.identity ?? {}, command);
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

  /**
   * Kills the container's process and removes its directory, cgroup and markers; a container that is
   * gone is a no-op. Refused, leaving the process running, unless the labels in its config.json prove it ours.
   */
  async removeContainer(id: string): Promise<void> {
    const entry = this.findEntry(id);
    if (!entry || !this.ownership.removable(`container ${id}`, this.ownership.container(entry.dir))) return;
    const { dir } = entry;
    await removeContainerFiles({ id, dir, logDir: this.logDirOf(entry), layout: this.layout, events: this.events, cgroups: this.cgroups, state: () => this.readStatus(id).state });
    this.dirs.delete(id);
    this.unwrittenExits.delete(dir);
    this.unenforced.delete(id);
    this.mountProblems.delete(id);
    this.events.forget(id);
  }

  /** Writes the new values to the container's cgroup; where there is none, its limits were never enforced (unenforcedLimits) and nothing changes. */
  async updateContainerResources(id: string, resources: ResourceRequirements | undefined): Promise<void> {
    if (!this.cgroups.available) return;
    const problem = this.cgroups.update(id, limitsFromResources(resources));
    if (problem) throw new Error(problem);
  }

  unenforcedLimits(id: string): string | undefined {
    return this.unenforced.get(id);
  }

  unhonouredMounts(id: string): string | undefined {
    return this.mountProblems.get(id);
  }

  /**
   * A file of the container's own at terminationMessagePath needs a mount at a path the host may
   * not have, and creating it would change the host: no such file is given, nothing is written to
   * the host's path, and only FallbackToLogsOnError gives a message. The default path is left
   * unsaid: every pod of the API server names it.
   */
  unhonouredTerminationMessagePath(container: ContainerSpec): string | undefined {
    if (container.terminationMessagePath === DEFAULT_TERMINATION_MESSAGE_PATH) return undefined;
    const instead = container.terminationMessagePolicy === "FallbackToLogsOnError"
      ? "a failed container's message is the end of its log"
      : "it has no termination message; with terminationMessagePolicy FallbackToLogsOnError a failed container's message is the end of its log";
    return `the process runtime gives the container no file of its own at ${container.terminationMessagePath} (one would change the host's filesystem), so nothing written there is read: ${instead}`;
  }

  /** From the container's cgroup (CPU and memory) and its directory (the log files); no rootfs, as there is no image layer. */
  async containerUsage(id: string): Promise<ContainerUsage | undefined> {
    const entry = this.findEntry(id);
    if (!entry || this.readStatus(id).state !== "running") return undefined;
    const dirs = this.cgroups.usageDirs(id);
    const [usage, logsUsedBytes] = await Promise.all([dirs ? readCgroupUsage(dirs, this.clock.now()) : { at: this.clock.now() }, containerLogFilesSize(this.logDirOf(entry))]);
    return { ...usage, logsUsedBytes };
  }

  /** The containers provably ours; every other container directory is left out (and reported once). */
  async listContainers(): Promise<ContainerInfo[]> {
    const infos: ContainerInfo[] = [];
    for (const entry of this.layout.scanContainers()) {
      const { id, dir } = entry;
      this.dirs.set(id, entry);
      const record = this.ownership.listed(`container ${id}`, dir, this.ownership.container(dir));
      if (!record) continue;
      let status = this.readStatus(id);
      // An agent killed right after launching a monitor leaves a container whose process is about to
      // run: wait for the monitor to report rather than take it for one that never ran.
      if (status.state === "created" && monitorsOf(dir).length > 0) {
        await this.events.waitFor(id, () => readPid(dir) !== undefined || readExit(dir) !== undefined || monitorsOf(dir).length === 0, this.startTimeoutMs);
        status = this.readStatus(id);
      }
      if (status.state === "running") this.events.track(id);
      infos.push({ ...status, labels: record.labels, sandboxId: record.sandboxId });
    }
    return infos;
  }

  async readLogs(id: string, options: LogOptions = {}): Promise<string> {
    const entry = this.findEntry(id);
    if (!entry) throw new Error(`logs of container ${id}: no such container`);
    const path = containerLogPath(this.logDirOf(entry));
    if (isCriLogPath(path)) return readCriLogText(path, options.tail);
    const text = readText(path) ?? "";
    if (options.tail === undefined) return text;
    if (options.tail <= 0) return "";
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines.length === 0 ? "" : `${lines.slice(-options.tail).join("\n")}\n`;
  }

  async ensureImage(_container: ContainerSpec): Promise<PullResult> {
    return { pulled: false, durationMs: 0 };
  }

  /** There is no image: every process runs as the agent's own user. */
  async imageUser(_image: string): Promise<ImageUser> {
    return { uid: process.getuid?.() ?? 0 };
  }

  watch(listener: (event: RuntimeEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  async close(): Promise<void> {
    this.events.close();
    this.cgroups.release();
  }

  /** The relist (the PLEG runs it): exits the marker watch missed, and monitors that died under their container. */
  async relist(): Promise<void> {
    this.events.recheck();
  }

  private findDir(id: string): string | undefined {
    return this.findEntry(id)?.dir;
  }

  private findEntry(id: string): ContainerDirEntry | undefined {
    const cached = this.dirs.get(id);
    if (cached && existsSync(cached.dir)) return cached;
    this.dirs.delete(id);
    for (const entry of this.layout.findContainer(id)) this.dirs.set(entry.id, entry);
    const found = this.dirs.get(id);
    return found && existsSync(found.dir) ? found : undefined;
  }

  /** Where the container's log is (beside its records, for an earlier version's container). */
  private logDirOf(entry: ContainerDirEntry): string {
    return this.layout.logDir(entry.podUid, entry.id);
  }

  private readStatus(id: string): ContainerStatus {
    const entry = this.findEntry(id);
    return readContainerStatus(id, entry && { dir: entry.dir, logDir: this.logDirOf(entry) }, { cgroups: this.cgroups, clock: this.clock, unwrittenExits: this.unwrittenExits });
  }
}

/** The content of a CRI log, both streams in file order; `tail` counts its records. Empty when there is no file yet. */
function readCriLogText(path: string, tail: number | undefined): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return "";
  }
  return decodeCriLog(bytes, tail).toString("utf8");
}

/** The host's cgroups for this agent: its database identity keeps two agents' cgroups apart. */
function hostCgroups(owner: string | undefined): Cgroups {
  const identity = owner ?? "unowned";
  if (!SAFE_NAME.test(identity)) return new Cgroups({ kind: "unavailable", reason: `the identity ${JSON.stringify(identity)} cannot name a cgroup` }, identity);
  return new Cgroups(detectHostCgroupMode(), identity);
}
