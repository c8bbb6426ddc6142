/**
 * The runtime seam, shaped like the CRI: a sandbox manager, a container manager and an image
 * manager, composed into `Runtime`. The kubelet never starts a process itself; it calls these.
 * Every runtime (fake, process, docker) runs the same contract suite in test/runtime-contract.ts;
 * the fake, which runs no command, is told what each command does, and has no case on what a command itself does.
 */
import type { ContainerSpec, PodSpec, ResourceRequirements } from "../manifest/types.ts";
import type { SignalName } from "../manifest/signals.ts";

/** RunPodSandbox's result: the thing every container of a pod joins. */
export interface Sandbox {
  id: string;
  /** The pod IP: 127.0.0.1 for the process runtime, the pause container's address for docker. */
  ip: string;
  podUid: string;
  /** What the runtime set up differently than asked (a memory emptyDir on disk), for a Warning event each; not kept. */
  warnings?: string[];
}

export type ContainerKind = "init" | "sidecar" | "app" | "ephemeral";

export interface ContainerConfig {
  pod: PodSpec;
  container: ContainerSpec;
  kind: ContainerKind;
  /** 0 for the first start of this container in this pod, then 1, 2 ... (the restart count). */
  attempt: number;
  sandbox: Sandbox;
  /** An ephemeral container with targetContainerName: the runtime id of the container whose process namespace it joins. */
  targetContainerId?: string;
  /** The OOM score adjustment of its processes (the CRI's LinuxContainerResources.oom_score_adj); absent: left as the runtime has it. */
  oomScoreAdj?: number;
}

export type RuntimeContainerState = "created" | "running" | "exited" | "unknown";

export interface ContainerStatus {
  id: string;
  state: RuntimeContainerState;
  /** Exit code as a runtime reports it: 128 + n for a process killed by signal n. */
  exitCode?: number;
  /** The signal that ended the process, when one did. */
  signal?: number;
  /** Runtime-given reason, e.g. "OOMKilled"; the kubelet fills Completed/Error when absent. */
  reason?: string;
  /** Epoch milliseconds. */
  startedAt?: number;
  finishedAt?: number;
  /** The host pid of the container's main process, while it runs (process runtime, docker). */
  pid?: number;
  /**
   * Once it exited: what the container wrote to the file the runtime gave it at its
   * terminationMessagePath, its last MAX_TERMINATION_MESSAGE_BYTES (termination-message.ts).
   * Absent where the runtime gives a container no such file.
   */
  terminationMessage?: string;
  /** A file holding the container's combined stdout/stderr, when the runtime keeps one. */
  logPath?: string;
  /**
   * The signal a graceful stop sends, when the runtime knows it better than the spec does (the CRI's
   * ContainerStatus.stop_signal): the spec's, else the image's STOPSIGNAL, else SIGTERM.
   */
  stopSignal?: SignalName;
}

/** A container the runtime has, with the labels minikubelet put on it: what adoption reads. */
export interface ContainerInfo extends ContainerStatus {
  labels: Record<string, string>;
  sandboxId?: string;
}

export interface SandboxInfo extends Sandbox {
  labels: Record<string, string>;
  ready: boolean;
}

export interface ExecResult {
  exitCode: number;
  /** Combined stdout and stderr, possibly truncated. */
  output: string;
  timedOut: boolean;
}

/** A terminal's size in character cells, as kubectl's resize messages carry it. */
export interface TerminalSize {
  width: number;
  height: number;
}

/** What `exec` runs and where its output goes (`kubectl exec`). */
export interface ExecStreamRequest {
  command: string[];
  /** Attach stdin: `ExecSession.write` feeds it and `closeStdin` ends it. Without, stdin is empty. */
  stdin: boolean;
  /** Run the command on a pseudo-terminal; its output then all arrives as "stdout". */
  tty: boolean;
  /** The terminal's first size (tty only). */
  size?: TerminalSize;
  /**
   * Called with output as it comes. A returned promise holds back further output until it settles,
   * where the runtime can pause the command's output (pipes, the engine's stream); a terminal can't.
   */
  output(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void>;
  /** Aborting kills the command (and what it started) and settles `exited`. */
  signal?: AbortSignal;
}

/** A running `exec`: the command's stdin, its terminal, and its end. */
export interface ExecSession {
  /** Writes to the command's stdin; ignored without stdin or once it is closed. */
  write(data: Uint8Array): void;
  /** Ends the command's stdin (EOF). Idempotent. */
  closeStdin(): void;
  /** Resizes the terminal (tty only; otherwise ignored); resolves once the terminal has the size. */
  resize(size: TerminalSize): Promise<void>;
  /**
   * The exit code (128 + n for signal n) once the command ended and every byte of its output was
   * handed to `output`; a command killed by the abort signal gives 137.
   */
  exited: Promise<number>;
}

/** What `kubectl attach` asks of a container's main process: its own stdin and terminal, and its output from now on. */
export interface AttachRequest {
  /** Feed the container's stdin (it was created with stdin): `AttachSession.write` and `closeStdin`. */
  stdin: boolean;
  /** The container runs on a terminal (its spec's tty): its output all arrives as "stdout", resizes apply. */
  tty: boolean;
  /** The terminal's size to set at once (tty only). */
  size?: TerminalSize;
  /** As ExecStreamRequest.output: a returned promise holds further output back where the runtime can. */
  output(stream: "stdout" | "stderr", data: Uint8Array): void | Promise<void>;
  /** Aborting detaches: the session ends, the container runs on. */
  signal?: AbortSignal;
}

/** One attach to a running container. */
export interface AttachSession {
  /** Writes to the container's stdin; ignored without stdin or once closed. */
  write(data: Uint8Array): void;
  /**
   * The client's stdin ended. With `stdinOnce` (and no terminal) the container's stdin is closed
   * and the session goes on until the container exits; otherwise the session ends (a detach), as
   * the engine and containerd do. Idempotent.
   */
  closeStdin(): void;
  /** Resizes the container's terminal (tty only; otherwise ignored). */
  resize(size: TerminalSize): Promise<void>;
  /** Settles once the session is over (the container exited, or it was detached), every byte of output handed on first. */
  ended: Promise<void>;
}

/**
 * How a runtime can serve `kubectl attach` to a container, decided before the connection is
 * upgraded so a refusal is a plain Status: `attachContainer` serves it ("streams"); only the
 * output can be had, followed from the container's log as `logs -f` follows it ("output-log");
 * or not at all, with why.
 */
export type AttachSupport = { kind: "streams" } | { kind: "output-log" } | { kind: "refused"; reason: string };

export type RuntimeEvent =
  | { type: "exited"; containerId: string }
  | { type: "started"; containerId: string }
  /** The runtime itself went away or came back (dockerd restarting). */
  | { type: "health"; healthy: boolean; message: string };

export interface PullResult {
  /** False when the image was already present and the policy did not ask for a pull. */
  pulled: boolean;
  durationMs: number;
  sizeBytes?: number;
}

export interface LogOptions {
  tail?: number;
  /** Prefix each line with the time it was written (RFC3339Nano), as the kubelet's `timestamps`. */
  timestamps?: boolean;
  /** Only output written at or after this time, in ms since the epoch. */
  sinceMs?: number;
}

export interface SandboxManager {
  /** Creates the pod's sandbox, or returns the existing one for the same pod uid (idempotent). */
  runPodSandbox(pod: PodSpec): Promise<Sandbox>;
  /** Stops and removes the sandbox. Removing a removed sandbox is a no-op. */
  removePodSandbox(id: string): Promise<void>;
  /**
   * The host directory of a volume the kubelet fills itself (downwardAPI), where emptyDirs are: the
   * runtime hands it to the containers as it does an emptyDir and removes it with the sandbox. Pure.
   */
  podVolumeDir(pod: PodSpec, volumeName: string): string;
  listPodSandboxes(): Promise<SandboxInfo[]>;
  /**
   * Where this host dials `port` of the pod in `sandbox` (`kubectl port-forward`, the CRI's
   * PortForward): the process runtime's pods share the host's network (127.0.0.1), a docker pod
   * listens on its sandbox's address. Asks nothing of the runtime; throws when the sandbox has no
   * address to dial.
   */
  portForwardAddress(sandbox: Sandbox, port: number): { host: string; port: number };
  /**
   * Where the pod's emptyDir `volume` is on this host, for the eviction manager and the stats to
   * measure; undefined when it is not a host directory the agent can read (a memory medium the
   * engine keeps). Pure: asks nothing of the runtime.
   */
  emptyDirPath?(podUid: string, volume: string, medium?: string): string | undefined;
}

/**
 * One reading of a running container's resource usage (the CRI's ContainerStats): cumulative CPU
 * time, memory as cadvisor counts it, and the bytes its files take. A figure the runtime cannot
 * read is absent.
 */
export interface ContainerUsage {
  /** When it was read, epoch ms. */
  at: number;
  /** CPU time of all cores since the container started, in nanoseconds. */
  cpuUsageCoreNanoSeconds?: number;
  memory?: {
    usageBytes: number;
    /** Usage less the inactive file cache (cadvisor's working set), never below 0. */
    workingSetBytes: number;
    rssBytes?: number;
    /** The container's memory limit, when it has one. */
    limitBytes?: number;
    pageFaults?: number;
    majorPageFaults?: number;
  };
  /** Swap in use, and what the container may still swap when it has a swap limit. */
  swap?: { usageBytes: number; availableBytes?: number };
  /** The container's writable layer (docker); the process runtime has none. */
  rootfsUsedBytes?: number;
  /** The container's log files, rotated ones included. */
  logsUsedBytes?: number;
}

export interface ContainerManager {
  /** Creates and starts one container attempt; resolves with its id once it is running. */
  startContainer(config: ContainerConfig): Promise<string>;
  /** Current status. An id the runtime no longer knows gives state "unknown". */
  containerStatus(id: string): Promise<ContainerStatus>;
  /**
   * Sends a signal (any of manifest/signals.ts, by name) to the container's processes. Signalling an
   * exited container is a no-op.
   */
  killContainer(id: string, signal: SignalName): Promise<void>;
  /**
   * Runs a command inside the container; a command still running at the timeout, or when `signal`
   * aborts (a hook given up), is killed. A runtime whose commands die with their container may
   * leave `signal` to the container's stop.
   */
  execSync(id: string, command: string[], timeoutMs: number, signal?: AbortSignal): Promise<ExecResult>;
  /**
   * Starts an interactive command in a running container (`kubectl exec`). Rejects when the
   * container is not running or the command cannot be started. Callers bound how many run at once.
   */
  execStream(id: string, request: ExecStreamRequest): Promise<ExecSession>;
  /**
   * Whether an attach can be served: `stdin`, the client asks for the stdin of a container created
   * with one; `tty`, the container has a terminal (its spec's). Pure: nothing is asked of the runtime.
   */
  attachSupport(request: { stdin: boolean; tty: boolean }): AttachSupport;
  /**
   * Attaches to a running container's main process (attachSupport "streams"): output from now on,
   * stdin and resizes as asked. Rejects when the container is not running or cannot be attached.
   */
  attachContainer(id: string, request: AttachRequest): Promise<AttachSession>;
  /** Removes an exited container and its logs. Removing a removed container is a no-op. */
  removeContainer(id: string): Promise<void>;
  /** Every container carrying minikubelet's labels, running or exited. */
  listContainers(): Promise<ContainerInfo[]>;
  /** The container's output; a container already removed gives an error. */
  readLogs(id: string, options?: LogOptions): Promise<string>;
  /**
   * Why the container's resource limits are not enforced, when they are not (the process runtime
   * without writable cgroups); undefined when they are, or when the container sets none.
   */
  unenforcedLimits?(id: string): string | undefined;
  /**
   * Why the container's volumes are not at their mountPath, when they are not (the process runtime
   * not run as root, or a mountPath missing on the host); undefined when they are, or it has none.
   */
  unhonouredMounts?(id: string): string | undefined;
  /**
   * Why the container's terminationMessagePath is not a file of its own whose message is read at
   * the exit, when it is not (the process runtime cannot put one there without changing the host's
   * filesystem); undefined where it is, or for the default path. Pure.
   */
  unhonouredTerminationMessagePath?(container: ContainerSpec): string | undefined;
  /**
   * The container's resource usage now, read from its cgroup or the engine; undefined for a
   * container that is not running or that the runtime cannot measure. Never throws for a gone one.
   */
  containerUsage?(id: string): Promise<ContainerUsage | undefined>;
  /**
   * Gives a running container new cpu and memory values in place (the CRI's
   * UpdateContainerResources, for an in-place resize); a limit the new resources drop is lifted.
   * Throws when the runtime refuses them.
   */
  updateContainerResources?(id: string, resources: ResourceRequirements | undefined): Promise<void>;
}

/** The user an image runs as when the pod sets none (the CRI's ImageStatus uid and username); neither: root. */
export interface ImageUser {
  uid?: number;
  /** A user the image names, not a number: a non-root check cannot be made on it. */
  username?: string;
}

export interface ImageManager {
  /** Applies the pull policy: pulls when asked or missing; rejects with ImagePullError. */
  ensureImage(container: ContainerSpec, onProgress?: (line: string) => void): Promise<PullResult>;
  /** Who a container of `image` runs as unless its securityContext says: what runAsNonRoot is checked against. */
  imageUser?(image: string): Promise<ImageUser>;
  /**
   * The image filesystem (the CRI's ImageFsInfo): the directory images are stored under and the
   * bytes they take. A runtime without images has none.
   */
  imageFsUsage?(): Promise<{ path: string; usedBytes: number }>;
}

export interface Runtime extends SandboxManager, ContainerManager, ImageManager {
  readonly name: "process" | "docker" | "fake";
  /**
   * The engine's own version (the CRI's runtime_version, as `docker://27.3.1` names it): for a
   * runtime backed by an engine. The process runtime is minikubelet itself and has none.
   */
  version?(): Promise<string>;
  /** Subscribes to container events so the loop wakes at once; returns the unsubscribe function. */
  watch(listener: (event: RuntimeEvent) => void): () => void;
  /**
   * A relist of the runtime's own, cheaper than a listing (the PLEG's backstop, pleg/): reports
   * through `watch` every start and exit its event stream missed since the last one. A runtime
   * without one is relisted by listing its containers.
   */
  relist?(): Promise<void>;
  /** Releases connections and watchers; containers keep running. Idempotent. */
  close(): Promise<void>;
}

export class ImagePullError extends Error {
  override readonly name = "ImagePullError";
  constructor(
    readonly image: string,
    /** ErrImagePull or ErrImageNeverPull, as the kubelet words the waiting reason. */
    readonly reason: "ErrImagePull" | "ErrImageNeverPull",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The CRI's NotFound for a stop: the runtime has no container by this id it may act on, because
 * nothing recorded proves the container, or its process, its own (a corrupt record of its labels, or pid file).
 * Nothing was signalled; the kubelet takes the container for gone, as it does one the runtime cannot
 * find (ContainerStatusUnknown), rather than signal it forever.
 */
export class ContainerNotFoundError extends Error {
  override readonly name = "ContainerNotFoundError";
}

export class ContainerStartError extends Error {
  override readonly name = "ContainerStartError";
  constructor(
    readonly container: string,
    message: string,
    /** The kubelet's terminated reason for a container that could not start. */
    readonly reason = "StartError",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
