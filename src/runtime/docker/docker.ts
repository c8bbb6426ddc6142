/**
 * The docker runtime: real pods over the engine's API (dockerode; DOCKER_HOST honoured, else the
 * default socket). Each pod gets a pause container that owns its network and IPC namespaces, and
 * every container of the pod joins it, so containers of one pod reach each other on 127.0.0.1.
 * Everything it creates carries the labels of labels.ts, which is all a restarted agent needs to
 * adopt what is running.
 */
import Dockerode from "dockerode";
import { realClock, type Clock } from "../../clock.ts";
import { DEFAULT_LOG_POLICY, type ContainerLogPolicy } from "../log-rotation-policy.ts";
import type { ContainerSpec, PodSpec, ResourceRequirements } from "../../manifest/types.ts";
import { defaultVolumeRoot, emptyDirPath } from "./docker-container-config.ts";
import { ensureMemoryVolumes } from "./docker-memory-volumes.ts";
import { createAndStart, type ContainerEngine } from "./docker-container-start.ts";
import { isConflict, isNotFound, rethrowUnreachable } from "./docker-errors.ts";
import { DockerEventWatcher } from "./docker-events.ts";
import { DockerExitRecords } from "./docker-exits.ts";
import { engineAddressOf, engineEndpoint, useFetchTransport } from "./docker-transport.ts";
import { streamEngineLogs } from "./docker-logs.ts";
import { execWithTimeout, rethrowExecError } from "./docker-exec.ts";
import { startDockerExec } from "./docker-exec-stream.ts";
import { attachDockerContainer } from "./docker-attach.ts";
import { DockerImages } from "./docker-images.ts";
import { listSandboxes, removeSandbox, runSandbox, type SandboxEngine } from "./docker-sandbox.ts";
import { resourceHostConfig, type NodeResourcePolicy } from "./docker-resources.ts";
import { joinedSandbox, statusFromInspect, terminationFileOf } from "./docker-status.ts";
import { readTerminationFile } from "../termination-message.ts";
import { dockerContainerUsage } from "./docker-usage.ts";
import { isOwnedBy, LABEL } from "../labels.ts";
import { acquireNodeLock, type NodeLock } from "./docker-node-lock.ts";
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
import { DEFAULT_PAUSE_IMAGE } from "./pause-image.ts";
import type { SignalName } from "../../manifest/signals.ts";

export { DEFAULT_PAUSE_IMAGE };

export interface DockerRuntimeOptions {
  /** Default: the real clock. Times pulls, exec deadlines and event-stream reconnects. */
  clock?: Clock;
  /** The sandbox image; default DEFAULT_PAUSE_IMAGE (pulled if missing). */
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

export class DockerRuntime implements Runtime {
  readonly name = "docker" as const;
  readonly pauseImage: string;
  readonly volumeRoot: string;
  private readonly owner: string | undefined;
  private readonly logPolicy: ContainerLogPolicy;
  private readonly nodeResources: NodeResourcePolicy;
  private readonly docker: Dockerode;
  private readonly clock: Clock;
  private readonly images: DockerImages;
  private readonly events: DockerEventWatcher;
  /** What the sandbox and container-start modules use of this runtime. */
  private readonly engine: SandboxEngine & ContainerEngine;
  /** Exits the event stream reported, answered without an inspect (docker-exits.ts says why). */
  private readonly exits = new DockerExitRecords();
  /** Each container's termination message file on the host, learnt from an inspect of it (docker-status.ts). */
  private readonly terminationFiles = new Map<string, string>();

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
    this.engine = {
      docker: this.docker,
      images: this.images,
      pauseImage: this.pauseImage,
      volumeRoot: this.volumeRoot,
      owner: this.owner,
      logPolicy: this.logPolicy,
      nodeResources: this.nodeResources,
      owns: (labels) => this.owns(labels),
      ownLabels: (...extra) => this.ownLabels(...extra),
      remove: (id) => this.removeQuietly(id),
      endpoint: () => this.endpoint,
      started: (id) => this.learnStartTime(id),
    };
  }

  async runPodSandbox(pod: PodSpec): Promise<Sandbox> {
    await ensureMemoryVolumes(this.engine, pod);
    return runSandbox(this.engine, pod);
  }

  /** Removes the pod's containers, its pause container and its emptyDir volumes. */
  async removePodSandbox(id: string): Promise<void> {
    return removeSandbox(this.engine, id);
  }

  async listPodSandboxes(): Promise<SandboxInfo[]> {
    return listSandboxes(this.engine);
  }

  /**
   * The pause container's address on the engine's network, which the host routes to (the bridge),
   * or the host's loopback for a pod on the host's network (its sandbox's ip says so).
   */
  podVolumeDir(pod: PodSpec, volumeName: string): string {
    return emptyDirPath(this.volumeRoot, pod.uid, volumeName);
  }

  portForwardAddress(sandbox: Sandbox, port: number): { host: string; port: number } {
    if (!sandbox.ip) throw new Error(`sandbox ${sandbox.id.slice(0, 12)} has no IP address on the engine's network`);
    return { host: sandbox.ip, port };
  }

  /** A disk emptyDir's host directory; a memory one is the engine's tmpfs volume, sized by its limit, not measured. */
  emptyDirPath(podUid: string, volume: string, medium?: string): string | undefined {
    return medium === "Memory" ? undefined : emptyDirPath(this.volumeRoot, podUid, volume);
  }

  async startContainer(config: ContainerConfig): Promise<string> {
    return createAndStart(this.engine, config);
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
        (info) => {
          this.noteTerminationFile(info);
          this.remembered(statusFromInspect(info));
        },
        () => undefined, // the status of its exit is then inspected, as it always was
      );
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    const exited = this.exits.status(id);
    if (exited) return this.withTerminationMessage(exited);
    try {
      const info = await this.docker.getContainer(id).inspect();
      this.noteTerminationFile(info);
      return this.withTerminationMessage(this.remembered(statusFromInspect(info)));
    } catch (error) {
      if (isNotFound(error)) return { id, state: "unknown" };
      rethrowUnreachable(error, this.endpoint);
    }
  }

  async containerUsage(id: string): Promise<ContainerUsage | undefined> {
    return dockerContainerUsage(this.docker, id, () => this.clock.now()).catch((error) => rethrowUnreachable(error, this.endpoint));
  }

  /** `docker update` of the cpu and memory fields: 0 leaves a field as it is, so a limit the resources drop stays. */
  async updateContainerResources(id: string, resources: ResourceRequirements | undefined): Promise<void> {
    const { Memory, MemorySwap, CpuShares, CpuPeriod, CpuQuota } = resourceHostConfig(resources);
    try {
      await this.docker.getContainer(id).update({ Memory, MemorySwap, CpuShares, CpuPeriod, CpuQuota });
    } catch (error) {
      rethrowUnreachable(error, this.endpoint);
    }
  }

  async killContainer(id: string, signal: SignalName): Promise<void> {
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
      rethrowExecError(error, command, id);
    }
  }

  async execStream(id: string, request: ExecStreamRequest): Promise<ExecSession> {
    try {
      return await startDockerExec(this.docker, id, request, this.clock);
    } catch (error) {
      rethrowExecError(error, request.command, id);
    }
  }

  /** The engine holds every container's stdin and terminal: everything attach asks can be served. */
  attachSupport(_request: { stdin: boolean; tty: boolean }): AttachSupport {
    return { kind: "streams" };
  }

  async attachContainer(id: string, request: AttachRequest): Promise<AttachSession> {
    return attachDockerContainer(this.docker, id, request).catch((error: unknown) => {
      throw new Error(`attach to container ${id.slice(0, 12)}: ${(error as Error).message}`, { cause: error });
    });
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
      this.noteTerminationFile(info);
      return [{ ...this.withTerminationMessage(this.remembered(statusFromInspect(info))), labels: info.Config.Labels ?? {}, sandboxId: joinedSandbox(info) }];
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
    return streamEngineLogs(await engineAddressOf(this.docker, "logs"), id, options, onText, signal, opened);
  }

  ensureImage(container: ContainerSpec, onProgress?: (line: string) => void): Promise<PullResult> {
    return this.images.ensureImage(container, onProgress);
  }

  imageUser(image: string): Promise<ImageUser> {
    return this.images.user(image);
  }

  /** The engine's root directory, and the images' sizes added up (a layer two images share counts twice, as in `docker images`). */
  async imageFsUsage(): Promise<{ path: string; usedBytes: number }> {
    const [info, images] = await Promise.all([this.docker.info(), this.docker.listImages()]).catch((error) => rethrowUnreachable(error, this.endpoint));
    return { path: String((info as { DockerRootDir?: string }).DockerRootDir ?? "/var/lib/docker"), usedBytes: images.reduce((sum, image) => sum + (image.Size ?? 0), 0) };
  }

  async version(): Promise<string> {
    return (await this.docker.version()).Version;
  }

  watch(listener: (event: RuntimeEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  async close(): Promise<void> {
    this.events.close();
  }

  /** Where the engine is expected, for error messages: the socket path or the DOCKER_HOST address. */
  private get endpoint(): string {
    return engineEndpoint(this.docker);
  }

  private noteTerminationFile(info: Dockerode.ContainerInspectInfo): void {
    const file = terminationFileOf(info);
    if (file) this.terminationFiles.set(info.Id, file);
  }

  /** An exited container's status with what it left in its termination message file. */
  private withTerminationMessage(status: ContainerStatus): ContainerStatus {
    const file = status.state === "exited" ? this.terminationFiles.get(status.id) : undefined;
    const message = file === undefined ? undefined : readTerminationFile(file);
    return message === undefined ? status : { ...status, terminationMessage: message };
  }

  /** A running container's start time, kept for the status of its exit (docker-exits.ts). */
  private remembered(status: ContainerStatus): ContainerStatus {
    if (status.state === "running" && status.startedAt !== undefined) this.exits.running(status.id, status.startedAt);
    return status;
  }

  private async removeQuietly(id: string): Promise<void> {
    this.exits.forget(id);
    this.terminationFiles.delete(id);
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch (error) {
      // 404: already gone; 409: removal already in progress. Either way it will not exist.
      if (isNotFound(error) || isConflict(error)) return;
      throw error;
    }
  }
}
