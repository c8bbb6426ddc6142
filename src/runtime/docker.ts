/**
 * The docker runtime: real pods over the engine's API (dockerode; DOCKER_HOST honoured, else the
 * default socket). Each pod gets a pause container that owns its network and IPC namespaces, and
 * every container of the pod joins it, so containers of one pod reach each other on 127.0.0.1.
 * Everything it creates carries the labels of labels.ts, which is all a restarted agent needs to
 * adopt what is running.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import Dockerode from "dockerode";
import { realClock, type Clock } from "../clock.ts";
import { DEFAULT_LOG_POLICY, type ContainerLogPolicy } from "../logs/rotation-policy.ts";
import type { ContainerSpec, PodSpec } from "../manifest/types.ts";
import {
  containerCreateOptions,
  podVolumeDir,
  resolveMounts,
  type ResolvedMount,
} from "./docker-container-config.ts";
import { dockerMessage, dockerStatusCode, isConflict, isNotFound, isNotModified, rethrowUnreachable } from "./docker-errors.ts";
import { DockerEventWatcher } from "./docker-events.ts";
import { DockerExitRecords } from "./docker-exits.ts";
import { useFetchTransport } from "./docker-transport.ts";
import { streamEngineLogs, type EngineAddress } from "./docker-logs.ts";
import { execWithTimeout } from "./docker-exec.ts";
import { startDockerExec } from "./docker-exec-stream.ts";
import { DockerImages } from "./docker-images.ts";
import { runSandbox, type SandboxEngine } from "./docker-sandbox.ts";
import type { NodeResourcePolicy } from "./docker-resources.ts";
import { isOwnedBy, LABEL } from "./labels.ts";
import { acquireNodeLock, type NodeLock } from "./docker-node-lock.ts";
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
  type RuntimeContainerState,
  type RuntimeEvent,
  type Sandbox,
  type SandboxInfo,
} from "./runtime.ts";

export const DEFAULT_PAUSE_IMAGE = "registry.k8s.io/pause:3.10";

export interface DockerRuntimeOptions {
  /** Default: the real clock. Times pulls, exec deadlines and event-stream reconnects. */
  clock?: Clock;
  /** The sandbox image; default registry.k8s.io/pause:3.10 (pulled if missing). */
  pauseImage?: string;
  /** Default: `new Dockerode()`, which reads DOCKER_HOST or uses /var/run/docker.sock. */
  docker?: Dockerode;
  /**
   * Host directory holding emptyDir volumes as <root>/<podUid>/<volume>; default
   * /var/lib/minikubelet/pods as root, else $XDG_STATE_HOME (or ~/.local/state)/minikubelet/pods.
   */
  volumeRoot?: string;
  /**
   * The identity of the agent's database (store/identity.ts), put on everything created. When set,
   * only what carries it is listed, reused or removed: another database's containers are invisible.
   */
  owner?: string;
  /** The containers' log limits, given to the engine's json-file driver. Default: the kubelet's. */
  logPolicy?: ContainerLogPolicy;
  /** Node-wide limits on every container (`run --pod-max-pids`). Default: none. */
  nodeResources?: NodeResourcePolicy;
}

/** The engine's zero time, which it reports for "never started" / "never finished". */
const ZERO_TIME = "0001-01-01T00:00:00Z";

export class DockerRuntime implements Runtime {
  readonly name = "docker" as const;
  /** The engine's event stream can drop a line. */
  readonly reportsEveryExit = false;
  readonly pauseImage: string;
  readonly volumeRoot: string;
  private readonly owner: string | undefined;
  private readonly logPolicy: ContainerLogPolicy;
  private readonly nodeResources: NodeResourcePolicy;
  private readonly docker: Dockerode;
  private readonly clock: Clock;
  private readonly images: DockerImages;
  private readonly events: DockerEventWatcher;
  private readonly sandboxEngine: SandboxEngine;
  /** Exits the event stream reported, answered without an inspect (docker-exits.ts says why). */
  private readonly exits = new DockerExitRecords();

  constructor(options: DockerRuntimeOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.docker = useFetchTransport(options.docker ?? new Dockerode());
    this.pauseImage = options.pauseImage ?? DEFAULT_PAUSE_IMAGE;
    this.volumeRoot = options.volumeRoot ?? defaultVolumeRoot();
    this.owner = options.owner;
    this.logPolicy = options.logPolicy ?? DEFAULT_LOG_POLICY;
    this.nodeResources = options.nodeResources ?? {};
    this.images = new DockerImages(this.docker, this.clock);
    this.events = new DockerEventWatcher(this.docker, this.clock, this.ownLabels(), this.exits);
    this.sandboxEngine = {
      docker: this.docker,
      images: this.images,
      pauseImage: this.pauseImage,
      owner: this.owner,
      owns: (labels) => this.owns(labels),
      remove: (id) => this.removeQuietly(id),
      endpoint: () => this.endpoint,
    };
  }

  async runPodSandbox(pod: PodSpec): Promise<Sandbox> {
    return runSandbox(this.sandboxEngine, pod);
  }

  /** Removes the pod's containers, its pause container and its emptyDir volumes. */
  async removePodSandbox(id: string): Promise<void> {
    let podUid: string | undefined;
    try {
      const info = await this.docker.getContainer(id).inspect();
      if (!this.owns(info.Config.Labels ?? {})) throw new Error(`sandbox ${id.slice(0, 12)} was not created by this agent's database: not removed`);
      podUid = info.Config.Labels?.[LABEL.podUid];
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (podUid) {
      const members = await this.docker.listContainers({
        all: true,
        filters: { label: this.ownLabels(`${LABEL.podUid}=${podUid}`, `${LABEL.sandbox}=false`) },
      });
      await Promise.all(members.map((c) => this.removeQuietly(c.Id)));
    }
    await this.removeQuietly(id);
    if (podUid) rmSync(podVolumeDir(this.volumeRoot, podUid), { recursive: true, force: true });
  }

  async listPodSandboxes(): Promise<SandboxInfo[]> {
    const found = await this.docker.listContainers({
      all: true,
      filters: { label: this.ownLabels(`${LABEL.sandbox}=true`) },
    });
    return found.map((c) => {
      const hostNetwork = c.HostConfig?.NetworkMode === "host";
      const networks = Object.values(c.NetworkSettings?.Networks ?? {});
      return {
        id: c.Id,
        podUid: c.Labels[LABEL.podUid] ?? "",
        ip: hostNetwork ? "127.0.0.1" : (networks.find((n) => n.IPAddress)?.IPAddress ?? ""),
        labels: c.Labels,
        ready: c.State === "running",
      };
    });
  }

  async startContainer(config: ContainerConfig): Promise<string> {
    return this.createAndStart(config, true);
  }

  private async createAndStart(config: ContainerConfig, retryOnNameConflict: boolean): Promise<string> {
    const name = config.container.name;
    let options: Dockerode.ContainerCreateOptions;
    try {
      const mounts = resolveMounts(config.pod, config.container, this.volumeRoot);
      prepareMounts(mounts);
      options = containerCreateOptions(config, mounts, this.owner, this.logPolicy, this.nodeResources);
    } catch (error) {
      throw new ContainerStartError(name, (error as Error).message, "CreateContainerConfigError", { cause: error });
    }
    let container: Dockerode.Container;
    try {
      container = await this.docker.createContainer(options);
    } catch (error) {
      // No answer from the engine is not a failed start (no attempt is counted): the pass fails and is retried.
      if (dockerStatusCodeMissing(error)) rethrowUnreachable(error, this.endpoint);
      if (!isConflict(error) || !retryOnNameConflict) {
        throw new ContainerStartError(name, `creating container ${name}: ${dockerMessage(error)}`, "CreateContainerError", {
          cause: error,
        });
      }
      // This attempt's name exists: a call repeated after a crash of ours. Reuse a running one.
      const previous = await this.docker.getContainer(options.name as string).inspect();
      if (!this.owns(previous.Config.Labels ?? {})) {
        throw new ContainerStartError(name, `creating container ${name}: the name ${options.name} is taken by a container another agent's database created`, "CreateContainerError", { cause: error });
      }
      if (previous.State.Running) return previous.Id;
      await this.removeQuietly(previous.Id);
      return this.createAndStart(config, false);
    }
    try {
      await container.start();
    } catch (error) {
      if (isNotModified(error)) return container.id;
      await this.removeQuietly(container.id);
      throw new ContainerStartError(name, `starting container ${name}: ${dockerMessage(error)}`, "StartError", {
        cause: error,
      });
    }
    this.learnStartTime(container.id);
    return container.id;
  }

  /**
   * Reads when a container just started began, for the status of its exit (docker-exits.ts), without
   * holding up the start: the caller goes on while the engine answers.
   */
  private learnStartTime(id: string): void {
    this.docker
      .getContainer(id)
      .inspect()
      .then(
        (info) => void this.remembered(statusFromInspect(info)),
        () => undefined, // the status of its exit is then inspected, as it always was
      );
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    const exited = this.exits.status(id);
    if (exited) return exited;
    try {
      return this.remembered(statusFromInspect(await this.docker.getContainer(id).inspect()));
    } catch (error) {
      if (isNotFound(error)) return { id, state: "unknown" };
      rethrowUnreachable(error, this.endpoint);
    }
  }

  async killContainer(id: string, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    try {
      await this.docker.getContainer(id).kill({ signal });
    } catch (error) {
      // 409: not running; 404: gone. Both mean there is nothing left to signal.
      if (isConflict(error) || isNotFound(error)) return;
      rethrowUnreachable(error, this.endpoint);
    }
  }

  async execSync(id: string, command: string[], timeoutMs: number): Promise<ExecResult> {
    try {
      return await execWithTimeout(this.docker.getContainer(id), command, timeoutMs, this.clock);
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) {
        throw new Error(`exec ${JSON.stringify(command)} in container ${id.slice(0, 12)}: ${dockerMessage(error)}`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async execStream(id: string, request: ExecStreamRequest): Promise<ExecSession> {
    try {
      return await startDockerExec(this.docker, id, request, this.clock);
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) {
        throw new Error(`exec ${JSON.stringify(request.command)} in container ${id.slice(0, 12)}: ${dockerMessage(error)}`, { cause: error });
      }
      throw error;
    }
  }

  async removeContainer(id: string): Promise<void> {
    if (this.owner) {
      try {
        const info = await this.docker.getContainer(id).inspect();
        if (!this.owns(info.Config.Labels ?? {})) throw new Error(`container ${id.slice(0, 12)} was not created by this agent's database: not removed`);
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
    }
    await this.removeQuietly(id);
  }

  /**
   * Takes the engine-wide lock of `node` (docker-node-lock.ts) for the agent of `database`: one
   * agent per node and engine. The lock container uses the pause image, pulled if missing.
   */
  async lockNode(node: string, database: string): Promise<NodeLock> {
    await this.images.ensureImage({ image: this.pauseImage, imagePullPolicy: "IfNotPresent" });
    return acquireNodeLock(this.docker, { node, database, image: this.pauseImage });
  }

  /** The label filter for what this runtime may list and touch: minikubelet's, and this database's. */
  private ownLabels(...extra: string[]): string[] {
    return [`${LABEL.managedBy}=true`, ...(this.owner ? [`${LABEL.database}=${this.owner}`] : []), ...extra];
  }

  private owns(labels: Record<string, string>): boolean {
    return isOwnedBy(labels, { database: this.owner });
  }

  async listContainers(): Promise<ContainerInfo[]> {
    const found = await this.docker
      .listContainers({
        all: true,
        filters: { label: this.ownLabels(`${LABEL.sandbox}=false`) },
      })
      .catch((error) => rethrowUnreachable(error, this.endpoint));
    // The list lacks exit codes and times; inspect each (the count is bounded by garbage collection).
    const inspected = await Promise.all(
      found.map(async (c) => {
        try {
          return await this.docker.getContainer(c.Id).inspect();
        } catch (error) {
          if (isNotFound(error)) return undefined; // removed between list and inspect
          throw error;
        }
      }),
    );
    return inspected.flatMap((info) => {
      if (!info) return [];
      const network = info.HostConfig.NetworkMode ?? "";
      return [
        {
          ...this.remembered(statusFromInspect(info)),
          labels: info.Config.Labels ?? {},
          sandboxId: network.startsWith("container:") ? network.slice("container:".length) : undefined,
        },
      ];
    });
  }

  async readLogs(id: string, options: LogOptions = {}): Promise<string> {
    let text = "";
    await this.streamLogs(id, { ...options, follow: false }, (chunk) => void (text += chunk), new AbortController().signal);
    return text;
  }

  /**
   * Prints a container's output as it is written (`logs -f`): the last `tail` lines first (all when
   * unset), then new output from the engine's follow stream, until the container stops (the engine
   * ends the stream) or `signal` aborts.
   */
  followLogs(id: string, options: LogOptions, onText: (text: string) => void, signal: AbortSignal): Promise<void> {
    return this.streamLogs(id, { ...options, follow: true }, onText, signal);
  }

  /**
   * The container's output as the engine streams it, chunk by chunk: without `follow`, up to now.
   * `opened` is called once the engine has accepted the request (errors after it are mid-stream);
   * while a promise `onText` returned is pending, the stream is paused (a slow reader holds it back).
   */
  async streamLogs(
    id: string,
    options: LogOptions & { follow: boolean },
    onText: (text: string) => void | Promise<void>,
    signal: AbortSignal,
    opened?: () => void,
  ): Promise<void> {
    return streamEngineLogs(await this.engineAddress("logs"), id, options, onText, signal, opened);
  }

  ensureImage(container: ContainerSpec, onProgress?: (line: string) => void): Promise<PullResult> {
    return this.images.ensureImage(container, onProgress);
  }

  watch(listener: (event: RuntimeEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  async close(): Promise<void> {
    this.events.close();
  }

  /** The engine's address for the calls made with fetch alone (logs); TLS and ssh engines have none. */
  private async engineAddress(call: string): Promise<EngineAddress> {
    const modem = (this.docker as unknown as { modem: { socketPath?: string | (() => string | Promise<string>); host?: string; port?: number | string; protocol?: string } }).modem;
    if (modem.socketPath) return { socketPath: typeof modem.socketPath === "function" ? await modem.socketPath() : modem.socketPath };
    if ((modem.protocol ?? "http") !== "http" || !modem.host) throw new Error(`${call}: an engine reached over ${modem.protocol} is not supported`);
    return { host: modem.host, port: Number(modem.port ?? 2375) };
  }

  /** Where the engine is expected, for error messages: the socket path or the DOCKER_HOST address. */
  private get endpoint(): string {
    const modem = (this.docker as unknown as { modem?: { socketPath?: unknown; host?: string; port?: number } }).modem;
    if (typeof modem?.socketPath === "string") return modem.socketPath;
    return modem?.host ? `${modem.host}${modem.port ? `:${modem.port}` : ""}` : (process.env.DOCKER_HOST ?? "/var/run/docker.sock");
  }

  /** A running container's start time, kept for the status of its exit (docker-exits.ts). */
  private remembered(status: ContainerStatus): ContainerStatus {
    if (status.state === "running" && status.startedAt !== undefined) this.exits.running(status.id, status.startedAt);
    return status;
  }

  private async removeQuietly(id: string): Promise<void> {
    this.exits.forget(id);
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch (error) {
      // 404: already gone; 409: removal already in progress. Either way it will not exist.
      if (isNotFound(error) || isConflict(error)) return;
      throw error;
    }
  }
}

/** Maps the engine's inspect document to the runtime's status. */
export function statusFromInspect(info: Dockerode.ContainerInspectInfo): ContainerStatus {
  const state = info.State;
  const status: ContainerStatus = { id: info.Id, state: stateOf(state.Status) };
  const started = parseEngineTime(state.StartedAt);
  if (started !== undefined) status.startedAt = started;
  if (status.state === "running" && state.Pid > 0) status.pid = state.Pid;
  if (status.state === "exited") {
    status.exitCode = state.ExitCode;
    const finished = parseEngineTime(state.FinishedAt);
    // The engine stamps StartedAt after runc reports the start, so a process that exits at once
    // can carry a FinishedAt a little before it; a finish never precedes the start.
    if (finished !== undefined) status.finishedAt = Math.max(finished, started ?? finished);
    if (state.OOMKilled) status.reason = "OOMKilled";
  }
  return status;
}

function stateOf(status: string): RuntimeContainerState {
  switch (status) {
    case "created":
      return "created";
    case "running":
    case "paused":
    case "restarting":
      return "running";
    case "exited":
    case "dead":
    case "removing":
      return "exited";
    default:
      return "unknown";
  }
}

function parseEngineTime(value: string | undefined): number | undefined {
  if (!value || value.startsWith(ZERO_TIME.slice(0, 4))) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Creates emptyDir directories (world-writable, so a non-root container can write) and *OrCreate paths. */
function prepareMounts(mounts: ResolvedMount[]): void {
  for (const mount of mounts) {
    if (mount.create === "directory" && !existsSync(mount.source)) {
      mkdirSync(mount.source, { recursive: true });
      chmodSync(mount.source, 0o777); // mkdir's mode is cut by the umask
    } else if (mount.create === "file" && !existsSync(mount.source)) {
      mkdirSync(dirname(mount.source), { recursive: true });
      writeFileSync(mount.source, "");
    }
  }
}

function defaultVolumeRoot(): string {
  if (process.getuid?.() === 0) return "/var/lib/minikubelet/pods";
  const state = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "minikubelet", "pods");
}

/** A transport failure carries no HTTP status from the engine. */
function dockerStatusCodeMissing(error: unknown): boolean {
  return error instanceof Error && dockerStatusCode(error) === undefined;
}
