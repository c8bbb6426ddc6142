/**
 * The conformance suite every Runtime runs (Hono's `common.case.test.ts` shape): a runtime's test
 * file calls `runtimeContract("process", (clock) => new ProcessRuntime(...), { image })` and gets
 * these cases. Commands are tiny POSIX shell lines that busybox also has, so the docker runtime runs
 * the very same cases; the fake, which runs no command, is told what each line does instead (see
 * `scripted`). Every sandbox and container a case creates is removed after it.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { realClock, type Clock } from "../src/clock.ts";
import type { ContainerSpec, PodSpec } from "../src/manifest/types.ts";
import { LABEL } from "../src/runtime/labels.ts";
import type { ContainerStatus, Runtime, RuntimeEvent, Sandbox } from "../src/runtime/runtime.ts";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort } from "./e2e/helpers.ts";
import { ExecCapture } from "./exec-capture.ts";
import { FakeClock } from "./fake-clock.ts";
import type { FakeBehaviour } from "./fake-runtime.ts";

/** What a command line does, for a runtime that does not run it. */
export interface ScriptedExec {
  exitCode: number;
  output?: string;
  /** Absent: it ends at once. */
  durationMs?: number;
}

/** Tells a runtime that runs no command (the fake) what a case's command lines do. */
export interface ScriptedCommands<R extends Runtime> {
  /** The containers named `name` that `runtime` starts next behave so. */
  container(runtime: R, name: string, behaviour: FakeBehaviour): void;
  /** The exec of `command` in any of `runtime`'s containers behaves so. */
  exec(runtime: R, command: string[], result: ScriptedExec): void;
}

export interface RuntimeContractOptions<R extends Runtime> {
  /** The image each container names (the process runtime ignores it; docker needs busybox). */
  image: string;
  /** Called after each case, once its sandboxes are removed and the runtime is closed. */
  cleanup?: () => void | Promise<void>;
  /**
   * For a runtime that runs no command: how to tell it what each line does. Such a runtime runs
   * the cases on the runtime's own part (sandboxes, lifecycle, signals, events, logs, labels), not
   * those on what a command itself does (reads a file, its streams, a terminal, a socket).
   */
  scripted?: ScriptedCommands<R>;
}

let podSeq = 0;

/** A container spec with the API defaults filled in; `command` is run with `args` appended. */
export function contractContainer(name: string, command: string[], image = "busybox"): ContainerSpec {
  return {
    name,
    image,
    imagePullPolicy: "IfNotPresent",
    command,
    args: [],
    env: [],
    ports: [],
    volumeMounts: [],
    terminationMessagePath: "/dev/termination-log",
  };
}

/** A pod with a fresh uid (so cases never share containers on a shared runtime like dockerd). */
export function contractPod(name: string, containers: ContainerSpec[] = []): PodSpec {
  podSeq += 1;
  const uid = `${crypto.randomUUID().slice(0, 8)}-c0ffee-${String(podSeq).padStart(4, "0")}`;
  return {
    key: `contract/${name}`,
    namespace: "contract",
    name,
    fullName: name,
    node: "",
    uid,
    configHash: `hash-${uid}`,
    source: `/manifests/${name}.yaml`,
    labels: {},
    annotations: {},
    restartPolicy: "Never",
    terminationGracePeriodSeconds: 30,
    initContainers: [],
    containers,
    volumes: [],
    hostNetwork: false,
    shareProcessNamespace: false,
    manifest: {},
  };
}

/** Resolves `promise`, or rejects naming `what` once `ms` of real time pass. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not within ${ms}ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** What a server at host:port sends on a new connection before closing it ("" when the connection is refused). */
function readConnection(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const socket = connect(port, host);
    socket.on("data", (chunk) => (text += String(chunk)));
    socket.on("error", () => {});
    socket.on("close", () => resolve(text));
  });
}

/** Waits (re-reading on each runtime event, and every 25 ms) until `id`'s status passes `done`. */
export async function waitForStatus(
  runtime: Runtime,
  id: string,
  done: (status: ContainerStatus) => boolean,
  ms = 5000,
): Promise<ContainerStatus> {
  return within(
    ms,
    `container ${id} status`,
    (async () => {
      for (;;) {
        const status = await runtime.containerStatus(id);
        if (done(status)) return status;
        await new Promise((r) => setTimeout(r, 25));
      }
    })(),
  );
}

export async function waitForLog(runtime: Runtime, id: string, text: string, ms = 5000): Promise<string> {
  return within(
    ms,
    `log of ${id} containing "${text}"`,
    (async () => {
      for (;;) {
        const logs = await runtime.readLogs(id);
        if (logs.includes(text)) return logs;
        await new Promise((r) => setTimeout(r, 25));
      }
    })(),
  );
}

/**
 * `makeRuntime` builds the runtime on `clock`: the real clock, except where a case proves a
 * mechanism by a clock that never moves (no timer of the runtime's own can fire).
 */
export function runtimeContract<R extends Runtime>(
  name: string,
  makeRuntime: (clock: Clock) => R | Promise<R>,
  options: RuntimeContractOptions<R>,
): void {
  const scripted = options.scripted;
  describe(`runtime contract: ${name}${scripted ? " (scripted)" : ""}`, () => {
    let runtime: R;
    let sandboxes: Sandbox[] = [];
    let containers: string[] = [];

    beforeEach(async () => {
      runtime = await makeRuntime(realClock);
      sandboxes = [];
      containers = [];
    });

    /** A case on what a command itself does: only for a runtime that runs commands. */
    function commandTest(title: string, body: () => Promise<void>): void {
      if (!scripted) test(title, body);
    }

    /** What the exec of `command` does, for a runtime that does not run it. */
    function execDoes(command: string[], result: ScriptedExec): string[] {
      scripted?.exec(runtime, command, result);
      return command;
    }

    afterEach(async () => {
      for (const id of containers) await runtime.removeContainer(id);
      for (const sandbox of sandboxes) await runtime.removePodSandbox(sandbox.id);
      await runtime.close();
      await options.cleanup?.();
    });

    async function sandboxFor(pod: PodSpec): Promise<Sandbox> {
      const sandbox = await runtime.runPodSandbox(pod);
      sandboxes.push(sandbox);
      return sandbox;
    }

    /** Starts one container running `sh -c script` (which does what `does` says) in a new pod. */
    async function start(script: string, does: FakeBehaviour, containerName = "main", attempt = 0) {
      scripted?.container(runtime, containerName, does);
      const container = contractContainer(containerName, ["sh", "-c", script], options.image);
      const pod = contractPod(`${containerName}-pod`, [container]);
      const sandbox = await sandboxFor(pod);
      const id = await runtime.startContainer({ pod, container, kind: "app", attempt, sandbox });
      containers.push(id);
      return { id, pod, sandbox };
    }

    const exited = (s: ContainerStatus) => s.state === "exited";

    test("runPodSandbox is idempotent for the same pod uid and lists the sandbox labels", async () => {
      const pod = contractPod("sandbox-pod");
      const first = await sandboxFor(pod);
      const second = await runtime.runPodSandbox(pod);
      expect(second.id).toBe(first.id);
      expect(first.podUid).toBe(pod.uid);
      expect(first.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const listed = (await runtime.listPodSandboxes()).filter((s) => s.podUid === pod.uid);
      expect(listed).toHaveLength(1);
      expect(listed[0]?.labels[LABEL.podName]).toBe("sandbox-pod");
      expect(listed[0]?.labels[LABEL.configHash]).toBe(pod.configHash);
      await runtime.removePodSandbox(first.id);
      await runtime.removePodSandbox(first.id);
      expect((await runtime.listPodSandboxes()).filter((s) => s.podUid === pod.uid)).toHaveLength(0);
    });

    test("a pod's kubelet-filled volume directory (podVolumeDir) goes with its sandbox", async () => {
      const pod = { ...contractPod("volume-dir-pod"), volumes: [{ name: "info", type: "downwardAPI" as const, defaultMode: 0o644, items: [] }] };
      const sandbox = await sandboxFor(pod);
      const dir = runtime.podVolumeDir(pod, "info");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "name"), "volume-dir-pod");
      await runtime.removePodSandbox(sandbox.id);
      expect(existsSync(dir)).toBe(false);
    });

    commandTest("a container sees a kubelet-filled volume (podVolumeDir), which goes with its sandbox", async () => {
      const container = contractContainer("reader", ["sh", "-c", 'cat "${MINIKUBELET_VOLUME_INFO:-/etc/info}/name"'], options.image);
      container.volumeMounts = [{ name: "info", mountPath: "/etc/info", readOnly: false }];
      const pod = { ...contractPod("volume-pod", [container]), volumes: [{ name: "info", type: "downwardAPI" as const, defaultMode: 0o644, items: [] }] };
      const sandbox = await sandboxFor(pod);
      const dir = runtime.podVolumeDir(pod, "info");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "name"), "volume-pod");
      const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
      containers.push(id);
      await waitForStatus(runtime, id, exited);
      expect(await runtime.readLogs(id)).toBe("volume-pod");
      await runtime.removeContainer(id);
      await runtime.removePodSandbox(sandbox.id);
      expect(existsSync(dir)).toBe(false);
    });

    test("a started container writes its output to its log", async () => {
      const { id } = await start("echo hello from the container; echo to stderr >&2", { exitAfterMs: 0, output: "hello from the container\nto stderr\n" });
      const status = await waitForStatus(runtime, id, exited);
      expect(status.exitCode).toBe(0);
      const logs = await runtime.readLogs(id);
      expect(logs).toContain("hello from the container\n");
      expect(logs).toContain("to stderr\n");
    });

    commandTest("a container's HOSTNAME is its pod's hostname, as a container runtime sets it for every container", async () => {
      const { id, pod } = await start('echo "host=$HOSTNAME"', { exitAfterMs: 0 });
      await waitForStatus(runtime, id, exited);
      expect(await runtime.readLogs(id)).toBe(`host=${pod.name}\n`);
    });

    test.each([
      [0, "exit 0"],
      [1, "exit 1"],
      [3, "exit 3"],
    ])("exit code %d is reported with finishedAt >= startedAt", async (code, script) => {
      const { id } = await start(script, { exitAfterMs: 0, exitCode: code });
      const status = await waitForStatus(runtime, id, exited);
      expect(status.exitCode).toBe(code);
      expect(status.startedAt).toBeNumber();
      expect(status.finishedAt).toBeNumber();
      expect(status.finishedAt as number).toBeGreaterThanOrEqual(status.startedAt as number);
    });

    test("a running container is reported running with a start time", async () => {
      const { id } = await start("sleep 30", {});
      const status = await runtime.containerStatus(id);
      expect(status.state).toBe("running");
      expect(status.startedAt).toBeNumber();
      expect(status.exitCode).toBeUndefined();
      await runtime.killContainer(id, "SIGKILL");
    });

    test("SIGTERM ends a process that exits on it: exit code 143", async () => {
      const { id } = await start('trap "exit 143" TERM; echo ready; sleep 30 & wait', { output: "ready\n" });
      await waitForLog(runtime, id, "ready");
      await runtime.killContainer(id, "SIGTERM");
      const status = await waitForStatus(runtime, id, exited);
      expect(status.exitCode).toBe(143);
    });

    test("a process that traps SIGTERM keeps running; SIGKILL ends it with 137", async () => {
      const { id } = await start('trap "echo got TERM" TERM; echo ready; while :; do sleep 0.05; done', { output: "ready\n", ignoreSigterm: true, outputOnSigterm: "got TERM\n" });
      await waitForLog(runtime, id, "ready");
      await runtime.killContainer(id, "SIGTERM");
      await waitForLog(runtime, id, "got TERM");
      expect((await runtime.containerStatus(id)).state).toBe("running");
      await runtime.killContainer(id, "SIGKILL");
      const status = await waitForStatus(runtime, id, exited);
      expect(status.exitCode).toBe(137);
    });

    test("killing an exited container is a no-op that keeps its exit code", async () => {
      const { id } = await start("exit 5", { exitAfterMs: 0, exitCode: 5 });
      const before = await waitForStatus(runtime, id, exited);
      await runtime.killContainer(id, "SIGTERM");
      await runtime.killContainer(id, "SIGKILL");
      const after = await runtime.containerStatus(id);
      expect(after).toEqual(before);
    });

    commandTest("execSync returns combined output and the exit code", async () => {
      const { id } = await start("sleep 30", {});
      const result = await runtime.execSync(id, ["sh", "-c", "echo out; echo err >&2; exit 4"], 5000);
      expect(result.exitCode).toBe(4);
      expect(result.timedOut).toBe(false);
      // Both streams, in either order: docker delivers them as two multiplexed streams.
      expect(result.output).toContain("out\n");
      expect(result.output).toContain("err\n");
      const ok = await runtime.execSync(id, ["echo", "fine"], 5000);
      expect(ok).toEqual({ exitCode: 0, output: "fine\n", timedOut: false });
      await runtime.killContainer(id, "SIGKILL");
    });

    test("execSync kills a command still running at the timeout", async () => {
      const { id } = await start("sleep 30", {});
      const command = execDoes(["sh", "-c", "echo started; sleep 20"], { exitCode: 0, output: "started\n", durationMs: 20_000 });
      // Well before the command's own 20 s: the timeout ended it, not the command. Two seconds, so a
      // loaded engine has started the exec and its first line is out before the timeout falls.
      const result = await within(10_000, "exec with a 2s timeout", runtime.execSync(id, command, 2000));
      expect(result.timedOut).toBe(true);
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain("started");
      await runtime.killContainer(id, "SIGKILL");
    });

    commandTest("execStream delivers stdout and stderr apart, then the exit code", async () => {
      const { id } = await start("sleep 30", {});
      const capture = new ExecCapture();
      const session = await runtime.execStream(id, { command: ["sh", "-c", "echo out; echo err >&2; exit 3"], stdin: false, tty: false, output: capture.output });
      expect(await within(5000, "exec exit", session.exited)).toBe(3);
      expect(capture.stdout).toBe("out\n");
      expect(capture.stderr).toBe("err\n");
      await runtime.killContainer(id, "SIGKILL");
    });

    commandTest("execStream feeds stdin, and the command sees its end and keeps writing after it", async () => {
      const { id } = await start("sleep 30", {});
      const capture = new ExecCapture();
      const session = await runtime.execStream(id, { command: ["sh", "-c", "cat; echo after-eof"], stdin: true, tty: false, output: capture.output });
      session.write(new TextEncoder().encode("data1\n"));
      await capture.waitFor("stdout", "data1\n");
      session.closeStdin();
      expect(await within(5000, "exec exit", session.exited)).toBe(0);
      expect(capture.stdout).toBe("data1\nafter-eof\n");
      await runtime.killContainer(id, "SIGKILL");
    });

    commandTest("execStream with a TTY runs on a terminal of the asked size, and resizes it", async () => {
      const { id } = await start("sleep 30", {});
      const capture = new ExecCapture();
      const script = 'test -t 0 && echo on-a-tty; read a; stty size; read b; stty size; echo "got $b"; exit 2';
      const session = await runtime.execStream(id, { command: ["sh", "-c", script], stdin: true, tty: true, size: { width: 100, height: 30 }, output: capture.output });
      await capture.waitFor("stdout", "on-a-tty");
      session.write(new TextEncoder().encode("x\r"));
      await capture.waitFor("stdout", "30 100");
      await session.resize({ width: 120, height: 40 });
      session.write(new TextEncoder().encode("hello\r"));
      expect(await within(5000, "exec exit", session.exited)).toBe(2);
      expect(capture.stdout).toContain("40 120");
      // The terminal echoes the input and turns each newline into CR LF.
      expect(capture.stdout).toContain("got hello\r\n");
      expect(capture.stderr).toBe("");
      await runtime.killContainer(id, "SIGKILL");
    });

    test("execStream's abort signal kills the command", async () => {
      const { id } = await start("sleep 30", {});
      const abort = new AbortController();
      const command = execDoes(["sleep", "30"], { exitCode: 0, durationMs: 30_000 });
      const session = await runtime.execStream(id, { command, stdin: false, tty: false, output: () => undefined, signal: abort.signal });
      abort.abort();
      expect(await within(5000, "aborted exec exit", session.exited)).toBe(137);
      await runtime.killContainer(id, "SIGKILL");
    });

    test("execStream ends when its container stops, as a process in the container would", async () => {
      const { id } = await start("sleep 30", {});
      const command = execDoes(["sleep", "30"], { exitCode: 0, durationMs: 30_000 });
      const session = await runtime.execStream(id, { command, stdin: false, tty: false, output: () => undefined });
      await runtime.killContainer(id, "SIGKILL");
      expect(await within(5000, "exec of a stopped container", session.exited)).not.toBe(0);
    });

    test("execStream in an exited container is refused", async () => {
      const { id } = await start("exit 0", { exitAfterMs: 0 });
      await waitForStatus(runtime, id, exited);
      await expect(runtime.execStream(id, { command: ["true"], stdin: false, tty: false, output: () => undefined })).rejects.toThrow();
    });

    test("attach without stdin or a terminal (what `kubectl attach POD` asks) is never refused", () => {
      expect(runtime.attachSupport({ stdin: false, tty: false }).kind).not.toBe("refused");
    });

    test("watch() reports the exit from an event, not a poll: on a clock that never moves", async () => {
      // No timer of the runtime's own can fire on this clock, so only an event can deliver the exit.
      await runtime.close();
      runtime = await makeRuntime(new FakeClock());
      const { id } = await start("sleep 30", {});
      const seen: RuntimeEvent[] = [];
      const exitedEvent = new Promise<void>((resolve) => {
        const stop = runtime.watch((event) => {
          seen.push(event);
          if (event.type === "exited" && event.containerId === id) {
            stop();
            resolve();
          }
        });
      });
      await runtime.killContainer(id, "SIGKILL");
      await exitedEvent;
      expect((await runtime.containerStatus(id)).exitCode).toBe(137);
      expect(seen.filter((e) => e.type === "exited" && e.containerId === id)).toHaveLength(1);
    });

    test("listContainers returns each container with the labels minikubelet put on it", async () => {
      const { id, pod, sandbox } = await start("sleep 30", {}, "labelled", 2);
      const found = (await runtime.listContainers()).find((c) => c.id === id);
      expect(found).toBeDefined();
      expect(found?.state).toBe("running");
      expect(found?.sandboxId).toBe(sandbox.id);
      expect(found?.labels).toMatchObject({
        [LABEL.managedBy]: "true",
        [LABEL.podUid]: pod.uid,
        [LABEL.podName]: pod.fullName,
        [LABEL.containerName]: "labelled",
        [LABEL.attempt]: "2",
        [LABEL.configHash]: pod.configHash,
      });
      await runtime.killContainer(id, "SIGKILL");
    });

    test("removeContainer kills a running container, is idempotent, and forgets it", async () => {
      const { id } = await start("sleep 30", {});
      await runtime.removeContainer(id);
      await runtime.removeContainer(id);
      expect((await runtime.containerStatus(id)).state).toBe("unknown");
      expect((await runtime.listContainers()).map((c) => c.id)).not.toContain(id);
      await expect(runtime.readLogs(id)).rejects.toThrow();
    });

    commandTest("portForwardAddress is where the host reaches a port a container of the pod listens on", async () => {
      const port = await freePort();
      const { sandbox } = await start(`exec busybox nc -ll -p ${port} -e echo pong`, {});
      const address = runtime.portForwardAddress(sandbox, port);
      expect(address.port).toBe(port);
      const answer = await within(
        10_000,
        `an answer on ${address.host}:${port}`,
        (async () => {
          for (;;) {
            const text = await readConnection(address.host, port);
            if (text) return text;
            await new Promise((r) => setTimeout(r, 25));
          }
        })(),
      );
      expect(answer).toBe("pong\n");
    });

    test("readLogs with tail returns the last lines", async () => {
      const { id } = await start("for i in 1 2 3 4 5; do echo line$i; done", { exitAfterMs: 0, output: "line1\nline2\nline3\nline4\nline5\n" });
      await waitForStatus(runtime, id, exited);
      expect(await runtime.readLogs(id, { tail: 2 })).toBe("line4\nline5\n");
      expect(await runtime.readLogs(id, { tail: 10 })).toBe("line1\nline2\nline3\nline4\nline5\n");
    });

    test("a runtime that honours a terminationMessagePath reports what the container wrote there once it exited; one that does not reports nothing", async () => {
      const path = "/dev/termination-contract-log";
      const probe = { ...contractContainer("main", []), terminationMessagePath: path };
      const unhonoured = runtime.unhonouredTerminationMessagePath?.(probe);
      // Where it is not honoured the container writes nothing: the path would be the host's own.
      const script = unhonoured === undefined ? `echo -n DONE > ${path}` : "exit 0";
      scripted?.container(runtime, "main", { exitAfterMs: 0, terminationMessage: "DONE" });
      const container = { ...contractContainer("main", ["sh", "-c", script], options.image), terminationMessagePath: path };
      const pod = contractPod("termination-pod", [container]);
      const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox: await sandboxFor(pod) });
      containers.push(id);
      const status = await waitForStatus(runtime, id, exited);
      expect(status.terminationMessage).toBe(unhonoured === undefined ? "DONE" : undefined);
    });
  });
}
