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
  PullResult,
  Runtime,
  RuntimeEvent,
  Sandbox,
  SandboxInfo,
  TerminalSize,
} from "../src/runtime/runtime.ts";
import { ContainerStartError, ImagePullError } from "../src/runtime/runtime.ts";
import { containerLabels, sandboxLabels } from "../src/runtime/labels.ts";
import type { ContainerSpec, PodSpec, ResourceRequirements } from "../src/manifest/types.ts";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../src/clock.ts";
import { signalNumber, type SignalName } from "../src/manifest/signals.ts";
import { FakeAttaches } from "./fake-attach.ts";
import { lastBytes, MAX_TERMINATION_MESSAGE_BYTES } from "../src/runtime/termination-message.ts";

/** How a fake container behaves once started; seeded per container name by the test. */
export interface FakeBehaviour {
  /** Exit this many ms after starting; absent means run until killed. */
  exitAfterMs?: number;
  exitCode?: number;
  /** The runtime's reason for that exit, e.g. OOMKilled as docker reports it. */
  exitReason?: string;
  /** Ignore SIGTERM, like a PID 1 without a handler: only SIGKILL ends it. */
  ignoreSigterm?: boolean;
  /** Time between SIGTERM and the exit (143) for a container that handles it. */
  termDelayMs?: number;
  /** Handles only this signal, exiting 0 on it (after termDelayMs); every other but SIGKILL is ignored. */
  exitsOn?: string;
  /** What containerStatus reports as the stop signal, as docker reports an image's STOPSIGNAL. */
  reportedStopSignal?: string;
  /** Make startContainer fail with this message (a StartError). */
  startError?: string;
  /** What the container writes to its log; default: a line naming it and its attempt. */
  output?: string;
  /** Written to its log when a SIGTERM arrives, as a shell trap that echoes would. */
  outputOnSigterm?: string;
  /** What it writes to its termination message file, reported (its end, as a runtime reads it) once it exited. */
  terminationMessage?: string;
}

/** One interactive exec as a test scripts it (FakeRuntime.interactive): what was asked, and hands to drive it. */
export interface FakeExec {
  containerId: string;
  container: ContainerConfig;
  request: ExecStreamRequest;
  /** Everything written to stdin so far, and whether it was closed. */
  input: string;
  stdinClosed: boolean;
  /** Every resize, in order. */
  sizes: TerminalSize[];
  /** Called on each write and on the close of stdin. */
  onInput?: (exec: FakeExec) => void;
  stdout(text: string): Promise<void>;
  stderr(text: string): Promise<void>;
  /** Ends the command with `code`; later calls are ignored. */
  exit(code: number): void;
  ended: boolean;
}

interface FakeContainer extends ContainerInfo {
  config: ContainerConfig;
  cancelExit?: () => void;
  logs: string;
}

/**
 * A runtime that keeps containers in memory and runs them on a clock of the test's (a FakeClock,
 * or the real one when test/unit/fake-runtime-contract.test.ts holds it to the runtime contract).
 * Tests seed behaviour through public fields and read `calls` to see what the loop asked for, in order.
 */
export class FakeRuntime implements Runtime {
  readonly name = "fake" as const;
  readonly calls: string[] = [];
  readonly containers = new Map<string, FakeContainer>();
  readonly sandboxes = new Map<string, SandboxInfo>();
  /** Per container name; a function gets the attempt number. */
  behaviours = new Map<string, FakeBehaviour | ((attempt: number) => FakeBehaviour)>();
  /** Where a pod's emptyDir is, for the eviction manager to measure; unset: the runtime has no host volumes. */
  emptyDirPath?: (podUid: string, volume: string, medium?: string) => string | undefined;
  /**
   * Exec results per command line ("sh -c exit 1"); default exit 0 at once. A `durationMs` past an
   * execSync timeout ends it timed out with the output; an interactive exec exits after it.
   */
  exec: (container: ContainerConfig, command: string[]) => { exitCode: number; output?: string; durationMs?: number } = () => ({
    exitCode: 0,
  });
  /**
   * Scripts each interactive exec. The default runs `exec` (above) and writes its output to
   * stdout; with stdin it echoes the input and exits once stdin is closed.
   */
  interactive: (exec: FakeExec) => void = (exec) => {
    const result = this.exec(exec.container, exec.request.command);
    if (result.output) void exec.stdout(result.output);
    if (result.durationMs) {
      const cancel = this.clock.setTimeout(() => exec.exit(result.exitCode), result.durationMs);
      exec.request.signal?.addEventListener("abort", cancel, { once: true });
      return;
    }
    if (!exec.request.stdin) return exec.exit(result.exitCode);
    exec.onInput = (self) => {
      if (self.input) void self.stdout(self.input);
      self.input = "";
      if (self.stdinClosed) self.exit(result.exitCode);
    };
  };
  /** Every interactive exec started, in order. */
  readonly execs: FakeExec[] = [];
  /** Every attach, its support answer and its script (fake-attach.ts). */
  readonly attaches = new FakeAttaches();
  /** Images whose pull fails; the rest are pulled (policy Always) or present. */
  missingImages = new Set<string>();
  /** Where podVolumeDir puts a pod's kubelet-filled volumes; a test with a downwardAPI volume sets it. */
  volumeRoot?: string;
  /** Memory in use by container name, what containerUsage reports; a container not named here is not measured. */
  readonly memoryUsage = new Map<string, number>();
  /** Set: the next updates of a container's resources fail with this message. */
  updateError?: string;
  private readonly listeners = new Set<(event: RuntimeEvent) => void>();
  private nextId = 1;

  constructor(private readonly clock: Clock) {}

  async runPodSandbox(pod: PodSpec): Promise<Sandbox> {
    for (const sandbox of this.sandboxes.values()) if (sandbox.podUid === pod.uid) return sandbox;
    const sandbox: SandboxInfo = { id: `sandbox-${this.nextId++}`, ip: "10.0.0.2", podUid: pod.uid, labels: sandboxLabels(pod), ready: true };
    this.sandboxes.set(sandbox.id, sandbox);
    this.calls.push(`sandbox ${pod.fullName}`);
    return sandbox;
  }

  podVolumeDir(pod: PodSpec, volumeName: string): string {
    if (!this.volumeRoot) throw new Error("FakeRuntime.volumeRoot is not set: a test with a downwardAPI volume must give one");
    return join(this.volumeRoot, pod.uid, volumeName);
  }

  async removePodSandbox(id: string): Promise<void> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return;
    this.sandboxes.delete(id);
    // The pod's volume directories go with its sandbox, as with the real runtimes.
    if (this.volumeRoot) rmSync(join(this.volumeRoot, sandbox.podUid), { recursive: true, force: true });
    this.calls.push(`remove-sandbox ${id}`);
  }

  async listPodSandboxes(): Promise<SandboxInfo[]> {
    return [...this.sandboxes.values()];
  }

  /**
   * The host's loopback, whatever the sandbox's (made-up) IP: a test's fake pod "listens" on a real
   * loopback listener of the test's own. Recorded as `port-forward <sandbox> <port>`.
   */
  portForwardAddress(sandbox: Sandbox, port: number): { host: string; port: number } {
    this.calls.push(`port-forward ${sandbox.id} ${port}`);
    return { host: "127.0.0.1", port };
  }

  async ensureImage(container: ContainerSpec): Promise<PullResult> {
    if (this.missingImages.has(container.image)) {
      throw new ImagePullError(container.image, container.imagePullPolicy === "Never" ? "ErrImageNeverPull" : "ErrImagePull", `manifest for ${container.image} not found`);
    }
    return { pulled: container.imagePullPolicy === "Always", durationMs: 0 };
  }

  async startContainer(config: ContainerConfig): Promise<string> {
    const name = config.container.name;
    const seeded = this.behaviours.get(name);
    const behaviour = typeof seeded === "function" ? seeded(config.attempt) : (seeded ?? {});
    if (behaviour.startError) throw new ContainerStartError(name, behaviour.startError);
    const id = `${name}-${config.attempt}-${this.nextId++}`;
    const container: FakeContainer = {
      id,
      config,
      state: "running",
      startedAt: this.clock.now(),
      labels: containerLabels(config),
      sandboxId: config.sandbox.id,
      logs: behaviour.output ?? `${name} attempt ${config.attempt}\n`,
    };
    this.containers.set(id, container);
    this.calls.push(`start ${name} attempt=${config.attempt}`);
    if (behaviour.exitAfterMs !== undefined) {
      container.cancelExit = this.clock.setTimeout(() => this.finish(id, behaviour.exitCode ?? 0, undefined, behaviour.exitReason), behaviour.exitAfterMs);
    }
    (container as FakeContainer & { behaviour: FakeBehaviour }).behaviour = behaviour;
    return id;
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    const container = this.containers.get(id);
    if (!container) return { id, state: "unknown" };
    const { config: _config, cancelExit: _cancel, logs: _logs, labels: _labels, ...status } = container;
    const { behaviour, ...rest } = status as typeof status & { behaviour?: FakeBehaviour };
    const reported = behaviour?.reportedStopSignal;
    const written = behaviour?.terminationMessage;
    return {
      ...rest,
      ...(reported && { stopSignal: reported }),
      ...(written !== undefined && rest.state === "exited" && { terminationMessage: lastBytes(written, MAX_TERMINATION_MESSAGE_BYTES) }),
    };
  }

  async killContainer(id: string, signal: SignalName): Promise<void> {
    const container = this.containers.get(id);
    if (!container || container.state !== "running") return;
    this.calls.push(`kill ${container.config.container.name} ${signal}`);
    const behaviour = (container as FakeContainer & { behaviour?: FakeBehaviour }).behaviour ?? {};
    if (signal === "SIGKILL") return this.finish(id, 137, 9);
    if (signal === "SIGTERM" && behaviour.outputOnSigterm) container.logs += behaviour.outputOnSigterm;
    if (behaviour.exitsOn !== undefined ? signal !== behaviour.exitsOn : behaviour.ignoreSigterm) return;
    const number = signalNumber(signal);
    if (number === undefined) throw new Error(`fake runtime: unknown signal ${signal}`);
    // A handled signal ends the process cleanly; an unhandled one kills it, reported as 128 + n.
    const end = () => (behaviour.exitsOn !== undefined ? this.finish(id, 0) : this.finish(id, 128 + number, number));
    container.cancelExit?.();
    if (behaviour.termDelayMs) {
      container.cancelExit = this.clock.setTimeout(end, behaviour.termDelayMs);
    } else {
      end();
    }
  }

  /** Recorded as `resize NAME cpu=REQ/LIMIT memory=REQ/LIMIT`; the container's config carries the new values after. */
  async updateContainerResources(id: string, resources: ResourceRequirements | undefined): Promise<void> {
    const container = this.containers.get(id);
    if (!container || container.state !== "running") throw new Error(`container ${id} is not running`);
    if (this.updateError) throw new Error(this.updateError);
    const value = (list: "requests" | "limits", name: string) => resources?.[list][name] ?? "-";
    this.calls.push(`resize ${container.config.container.name} cpu=${value("requests", "cpu")}/${value("limits", "cpu")} memory=${value("requests", "memory")}/${value("limits", "memory")}`);
    const { resources: _old, ...spec } = container.config.container;
    container.config = { ...container.config, container: resources ? { ...spec, resources } : spec };
  }

  async containerUsage(id: string): Promise<ContainerUsage | undefined> {
    const container = this.containers.get(id);
    const bytes = container && container.state === "running" ? this.memoryUsage.get(container.config.container.name) : undefined;
    return bytes === undefined ? undefined : { at: this.clock.now(), memory: { usageBytes: bytes, workingSetBytes: bytes } };
  }

  async execSync(id: string, command: string[], timeoutMs: number): Promise<ExecResult> {
    const container = this.containers.get(id);
    if (!container || container.state !== "running") return { exitCode: 126, output: "container not running", timedOut: false };
    this.calls.push(`exec ${container.config.container.name} ${command.join(" ")}`);
    const result = this.exec(container.config, command);
    const duration = result.durationMs ?? 0;
    if (duration === 0) return { exitCode: result.exitCode, output: result.output ?? "", timedOut: false };
    return new Promise((resolve) => {
      if (duration > timeoutMs) {
        this.clock.setTimeout(() => resolve({ exitCode: -1, output: result.output ?? "", timedOut: true }), timeoutMs);
      } else {
        this.clock.setTimeout(() => resolve({ exitCode: result.exitCode, output: result.output ?? "", timedOut: false }), duration);
      }
    });
  }

  async execStream(id: string, request: ExecStreamRequest): Promise<ExecSession> {
    const container = this.containers.get(id);
    if (!container || container.state !== "running") throw new Error(`exec in container ${id}: container is not running`);
    this.calls.push(`exec-stream ${container.config.container.name} ${request.command.join(" ")}`);
    let settle: (code: number) => void = () => undefined;
    const exited = new Promise<number>((resolve) => (settle = resolve));
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    const exec: FakeExec = {
      containerId: id,
      container: container.config,
      request,
      input: "",
      stdinClosed: !request.stdin,
      sizes: request.size ? [request.size] : [],
      ended: false,
      stdout: async (text) => void (await request.output("stdout", encoder.encode(text))),
      stderr: async (text) => void (await request.output(request.tty ? "stdout" : "stderr", encoder.encode(text))),
      exit: (code) => {
        if (exec.ended) return;
        exec.ended = true;
        settle(code);
      },
    };
    request.signal?.addEventListener("abort", () => exec.exit(137), { once: true });
    this.execs.push(exec);
    this.interactive(exec);
    return {
      write: (data) => {
        if (exec.ended || exec.stdinClosed) return;
        exec.input += decoder.decode(data);
        exec.onInput?.(exec);
      },
      closeStdin: () => {
        if (exec.ended || exec.stdinClosed) return;
        exec.stdinClosed = true;
        exec.onInput?.(exec);
      },
      resize: async (size) => void exec.sizes.push(size),
      exited,
    };
  }

  attachSupport(request: { stdin: boolean; tty: boolean }): AttachSupport {
    return this.attaches.support(request);
  }

  async attachContainer(id: string, request: AttachRequest): Promise<AttachSession> {
    const container = this.containers.get(id);
    if (!container || container.state !== "running") throw new Error(`attach to container ${id}: container is not running`);
    this.calls.push(`attach ${container.config.container.name}`);
    return this.attaches.open(id, container.config, request);
  }

  async removeContainer(id: string): Promise<void> {
    const container = this.containers.get(id);
    if (!container) return;
    container.cancelExit?.();
    this.containers.delete(id);
    this.calls.push(`remove ${container.config.container.name}`);
  }

  async listContainers(): Promise<ContainerInfo[]> {
    return [...this.containers.values()].map(({ config: _c, cancelExit: _x, logs: _l, ...info }) => ({ ...info }));
  }

  async readLogs(id: string, options: LogOptions = {}): Promise<string> {
    const container = this.containers.get(id);
    if (!container) throw new Error(`container ${id} not found`);
    if (options.tail === undefined) return container.logs;
    const lines = container.logs.split(/(?<=\n)/);
    return options.tail > 0 ? lines.slice(-options.tail).join("") : "";
  }

  watch(listener: (event: RuntimeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  /** Ends a running container now with `exitCode`, as if its process exited. */
  finish(id: string, exitCode: number, signal?: number, reason?: string): void {
    const container = this.containers.get(id);
    if (!container || container.state !== "running") return;
    container.cancelExit?.();
    container.state = "exited";
    container.exitCode = exitCode;
    if (signal !== undefined) container.signal = signal;
    if (reason !== undefined) container.reason = reason;
    container.finishedAt = this.clock.now();
    this.attaches.exited(id);
    // Its execs end with it, as processes in a stopped container do.
    for (const exec of this.execs) if (exec.containerId === id) exec.exit(137);
    for (const listener of this.listeners) listener({ type: "exited", containerId: id });
  }

  /**
   * `docker restart` behind the agent's back: the same id runs again with a new start time. With
   * `quietly`, no events are sent (the stream was down, or the test sends them itself via `emit`).
   */
  restartInPlace(id: string, options: { quietly?: boolean } = {}): void {
    const container = this.containers.get(id);
    if (!container) throw new Error(`restartInPlace: no container ${id}`);
    const wasRunning = container.state === "running";
    container.cancelExit?.();
    container.state = "running";
    container.exitCode = undefined;
    container.reason = undefined;
    container.signal = undefined;
    container.startedAt = this.clock.now();
    if (options.quietly) return;
    if (wasRunning) for (const listener of this.listeners) listener({ type: "exited", containerId: id });
    for (const listener of this.listeners) listener({ type: "started", containerId: id });
  }

  /** Sends a runtime event to every watcher (a health change, a late start). */
  emit(event: RuntimeEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /** The running container of that name, for tests that end one by hand. */
  running(name: string): FakeContainer | undefined {
    return [...this.containers.values()].find((c) => c.config.container.name === name && c.state === "running");
  }

  startsOf(name: string): number {
    return this.calls.filter((call) => call.startsWith(`start ${name} `)).length;
  }
}
