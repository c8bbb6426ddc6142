/**
 * The process runtime: the shared contract with real child processes, then what only this runtime
 * does (its monitor outliving the agent, start errors, env and volumes, lost monitors).
 */
import { afterAll, afterEach, describe, expect, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import type { ContainerSpec, PodSpec } from "../../src/manifest/types.ts";
import { ContainerStartError, type RuntimeEvent } from "../../src/runtime/runtime.ts";
import { ProcessRuntime, volumeEnvName } from "../../src/runtime/process/process.ts";
import {
  containerIdPrefix,
  parseMonitorTime,
  readPid,
  writeAtomic,
} from "../../src/runtime/process/process-files.ts";
import { contractContainer, contractPod, runtimeContract, waitForLog, waitForStatus, within } from "../runtime-contract.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { isLiveProcess, processStartTicks } from "../../src/host/process-liveness.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

const roots: string[] = [];
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), "minikubelet-process-"));
  roots.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
});

runtimeContract(
  "process",
  (clock) => {
    const rootDir = tempRoot();
    return new ProcessRuntime({ rootDir, owner: cgroups.ownerFor(rootDir), clock });
  },
  { image: "none" },
);

describe("process runtime", () => {
  const open: ProcessRuntime[] = [];
  const started: { runtime: ProcessRuntime; id: string }[] = [];
  function make(rootDir: string): ProcessRuntime {
    const runtime = new ProcessRuntime({ rootDir, owner: cgroups.ownerFor(rootDir) });
    open.push(runtime);
    return runtime;
  }
  afterEach(async () => {
    for (const { runtime, id } of started.splice(0)) await runtime.removeContainer(id);
    for (const runtime of open.splice(0)) await runtime.close();
  });

  async function startIn(
    runtime: ProcessRuntime,
    command: string[],
    edit?: (container: ContainerSpec, pod: PodSpec) => void,
  ) {
    const container = contractContainer("main", command);
    const pod = contractPod("proc", [container]);
    edit?.(container, pod);
    const sandbox = await runtime.runPodSandbox(pod);
    const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
    started.push({ runtime, id });
    return { id, pod, sandbox };
  }

  test("the monitor outlives the agent: a second runtime adopts, kills and hears the exit", async () => {
    const root = tempRoot();
    const a = make(root);
    const { id } = await startIn(a, ["sleep", "30"]);
    const first = await a.containerStatus(id);
    expect(first.state).toBe("running");
    await a.close();

    const b = make(root);
    const adopted = (await b.listContainers()).find((c) => c.id === id);
    expect(adopted?.state).toBe("running");
    expect(adopted?.pid).toBe(first.pid as number);
    expect(adopted?.startedAt).toBe(first.startedAt as number);

    const events: RuntimeEvent[] = [];
    const heard = new Promise<void>((resolve) =>
      b.watch((event) => {
        events.push(event);
        if (event.type === "exited" && event.containerId === id) resolve();
      }),
    );
    await b.killContainer(id, "SIGTERM");
    await within(1000, "exited event on the adopting runtime", heard);
    const status = await b.containerStatus(id);
    expect(status.exitCode).toBe(143);
    const dir = join(root, "pods", adopted?.labels["io.kubernetes.pod.uid"] as string, "containers", id);
    // The finish time is the kernel's, when the monitor noted the end: no process was run for it.
    expect(readFileSync(join(dir, "exit"), "utf8")).toBe("143 -\n");
    expect(status.finishedAt).toBe(Math.round(statSync(join(dir, ".ended")).mtimeMs));
    expect(status.finishedAt!).toBeGreaterThanOrEqual(status.startedAt!);
    started[0] = { runtime: b, id };
  });

  test("an exit while no agent runs is found by the next one, with its code and finish time", async () => {
    const root = tempRoot();
    const a = make(root);
    const { id } = await startIn(a, ["sleep", "30"]);
    const { pid } = await a.containerStatus(id);
    await a.close();
    process.kill(pid as number, "SIGKILL");
    const marker = join(root, "events", `${id}.exited`);
    await within(2000, "the monitor's exit marker", (async () => {
      while (!existsSync(marker)) await new Promise((r) => setTimeout(r, 10));
    })());
    const b = make(root);
    const found = (await b.listContainers()).find((c) => c.id === id);
    expect(found).toMatchObject({ state: "exited", exitCode: 137 });
    expect(found?.finishedAt as number).toBeGreaterThanOrEqual(found?.startedAt as number);
    started[0] = { runtime: b, id };
  });

  test("removePodSandbox kills the pod's processes and removes its directory", async () => {
    const root = tempRoot();
    const runtime = make(root);
    const { id, sandbox, pod } = await startIn(runtime, ["sleep", "30"]);
    const status = await runtime.containerStatus(id);
    const ticks = processStartTicks(status.pid as number) as string;
    await runtime.removePodSandbox(sandbox.id);
    expect(isLiveProcess(status.pid as number, ticks)).toBe(false);
    expect(existsSync(join(root, "pods", pod.uid))).toBe(false);
    expect((await runtime.containerStatus(id)).state).toBe("unknown");
    started.length = 0;
  });

  test("removing a pod, and asking after its removed container, list no other pod's directories (a stop of N pods is not N x N reads)", async () => {
    const root = tempRoot();
    const runtime = make(root);
    const pods = [];
    for (let i = 0; i < 6; i++) pods.push(await startIn(runtime, ["true"]));
    for (const { id } of pods) await waitForStatus(runtime, id, (status) => status.state === "exited");
    const [target, ...others] = pods as [(typeof pods)[number], ...typeof pods];
    const otherDirs = others.map(({ pod }) => join(root, "pods", pod.uid));
    const listings = spyOn(fs, "readdirSync");
    try {
      await runtime.removePodSandbox(target.sandbox.id);
      expect((await runtime.containerStatus(target.id)).state).toBe("unknown");
      expect((await runtime.containerStatus(`${containerIdPrefix(target.pod.uid)}main-9-000000`)).state).toBe("unknown");
      const listed = listings.mock.calls.map(([path]) => String(path));
      expect(listed.filter((path) => otherDirs.some((dir) => path.startsWith(dir)))).toEqual([]);
    } finally {
      listings.mockRestore();
    }
    expect(existsSync(join(root, "pods", target.pod.uid))).toBe(false);
    for (const { id } of others) expect((await runtime.containerStatus(id)).state).toBe("exited");
    started.splice(started.findIndex((entry) => entry.id === target.id), 1);
  });

  test("neither command nor args is refused with a StartError naming the container", async () => {
    const runtime = make(tempRoot());
    const error = await startIn(runtime, []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContainerStartError);
    expect((error as ContainerStartError).reason).toBe("StartError");
    expect((error as ContainerStartError).message).toContain("container main: required: command or args");
  });

  test("args without command run as the command, args[0] the program (an image without ENTRYPOINT runs its CMD)", async () => {
    const runtime = make(tempRoot());
    const { id } = await startIn(runtime, [], (c) => (c.args = ["sh", "-c", "echo ran as $0; exit 4"]));
    const status = await waitForStatus(runtime, id, (s) => s.state === "exited");
    expect(status.exitCode).toBe(4);
    expect(await runtime.readLogs(id)).toBe("ran as sh\n");
  });

  test("a missing executable is a StartError in containerd's words", async () => {
    const runtime = make(tempRoot());
    const error = await startIn(runtime, ["no-such-binary-xyz"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContainerStartError);
    expect((error as Error).message).toContain('exec: "no-such-binary-xyz": executable file not found in $PATH');
  });

  test("env, args, workingDir default and volume paths reach the process", async () => {
    const runtime = make(tempRoot());
    const { id } = await startIn(runtime, ["sh", "-c"], (c, pod) => {
      c.args = ['echo "pwd=$(pwd) x=$X vol=$MINIKUBELET_VOLUME_CACHE_DIR path=$PATH"; echo hi > "$MINIKUBELET_VOLUME_CACHE_DIR/f"'];
      c.env = [{ name: "X", value: "from spec" }];
      c.volumeMounts = [{ name: "cache-dir", mountPath: "/cache", readOnly: false }];
      pod.volumes = [{ name: "cache-dir", type: "emptyDir" }];
    });
    expect(volumeEnvName("cache-dir")).toBe("MINIKUBELET_VOLUME_CACHE_DIR");
    const status = await waitForStatus(runtime, id, (s) => s.state === "exited");
    const logs = await runtime.readLogs(id);
    expect(status.exitCode).toBe(0);
    expect(logs).toContain("x=from spec");
    expect(logs).toMatch(/pwd=\/.*\/pods\/[^ ]+ /);
    expect(logs).toContain("path=/usr/local/sbin:");
    const volume = /vol=(\S+)/.exec(logs)?.[1] ?? "";
    expect(volume).toEndWith("/volumes/cache-dir");
    expect(readFileSync(join(volume, "f"), "utf8")).toBe("hi\n");
  });

  test("each container runs in its own session, and the whole group gets the signal", async () => {
    const runtime = make(tempRoot());
    const { id } = await startIn(runtime, ["sh", "-c", "sleep 30 & echo child=$!; wait"]);
    const logs = await waitForLog(runtime, id, "child=");
    const child = Number(/child=(\d+)/.exec(logs)?.[1]);
    const status = await runtime.containerStatus(id);
    const stat = readFileSync(`/proc/${status.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // Fields after comm: state, ppid, pgrp, session.
    expect(Number(stat[2])).toBe(status.pid as number);
    expect(Number(stat[3])).toBe(status.pid as number);
    await runtime.killContainer(id, "SIGKILL");
    await waitForStatus(runtime, id, (s) => s.state === "exited");
    expect(existsSync(`/proc/${child}`) && !readFileSync(`/proc/${child}/stat`, "utf8").includes(") Z")).toBe(false);
  });

  test("the container starts with default signal dispositions (no SIGINT/SIGQUIT ignored)", async () => {
    const runtime = make(tempRoot());
    const { id } = await startIn(runtime, ["cat", "/proc/self/status"]);
    await waitForStatus(runtime, id, (s) => s.state === "exited");
    expect(await runtime.readLogs(id)).toContain("SigIgn:\t0000000000000000\n");
  });

  test("when the main process exits, what it left running in its group is killed", async () => {
    const runtime = make(tempRoot());
    const { id } = await startIn(runtime, ["sh", "-c", "sleep 30 & echo child=$!; exit 0"]);
    await waitForStatus(runtime, id, (s) => s.state === "exited");
    const child = Number(/child=(\d+)/.exec(await runtime.readLogs(id))?.[1]);
    // The SIGKILL was sent before the exit was recorded; a loaded machine may not have run it yet.
    const gone = () => !existsSync(`/proc/${child}/stat`) || readFileSync(`/proc/${child}/stat`, "utf8").includes(") Z");
    for (let i = 0; i < 200 && !gone(); i++) await Bun.sleep(10);
    expect(gone()).toBe(true);
  });

  test("a monitor killed under a running container: the exit is recorded as lost (255) by the relist's look at unwatched monitors", async () => {
    const root = tempRoot();
    // Real time, which the relist's once-a-minute look at monitors no longer our children can be moved past.
    let ahead = 0;
    const runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root), clock: { ...realClock, now: () => Date.now() + ahead } });
    open.push(runtime);
    const { id, pod } = await startIn(runtime, ["sleep", "30"]);
    const pid = readPid(join(root, "pods", pod.uid, "containers", id));
    expect(pid).toBeDefined();
    process.kill(pid?.monitorPid as number, "SIGKILL");
    const events: RuntimeEvent[] = [];
    runtime.watch((event) => events.push(event));
    // The monitor's end is heard while its container still runs: nothing to report yet, and nothing will
    // tell of the container's end but the relist.
    const monitorGone = () => !isLiveProcess(pid!.monitorPid, pid!.monitorStartTicks);
    for (let i = 0; i < 500 && !monitorGone(); i++) await Bun.sleep(10);
    await Bun.sleep(50);
    expect((await runtime.containerStatus(id)).state).toBe("running");
    process.kill(pid?.pid as number, "SIGKILL");
    void runtime.relist();
    // No end is told before the relist's look (a late word of the start, on a loaded machine, is not one).
    expect(events.filter((event) => event.type !== "started")).toEqual([]);
    // Each look moves the clock past another minute: a look that came before the kill had landed
    // (a loaded machine) would otherwise put the next one a real minute away.
    await waitForStatus(runtime, id, () => {
      ahead += 61_000;
      void runtime.relist();
      return events.some((e) => e.type === "exited" && e.containerId === id);
    });
    const status = await runtime.containerStatus(id);
    expect(status).toMatchObject({ state: "exited", exitCode: 255, reason: "Unknown" });
  });

  test("a recorded pid whose start time differs is never signalled (pid reuse)", async () => {
    const root = tempRoot();
    const runtime = make(root);
    const { id, pod } = await startIn(runtime, ["sleep", "30"]);
    const dir = join(root, "pods", pod.uid, "containers", id);
    const pid = readPid(dir);
    if (!pid) throw new Error("no pid file");
    // The container's pid is recorded before it execs setsid: its own group exists a moment later.
    const leadsItsGroup = () => readFileSync(`/proc/${pid.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[2] === String(pid.pid);
    for (let i = 0; i < 200 && !leadsItsGroup(); i++) await Bun.sleep(5);
    expect(leadsItsGroup()).toBe(true);
    // Pretend the recorded process is an older one that had the same pid: its start time differs.
    writeAtomic(join(dir, "pid"), `${pid.pid} 1 ${pid.startedAt * 1_000_000} ${pid.monitorPid} ${pid.monitorStartTicks}\n`);
    await runtime.killContainer(id, "SIGKILL");
    expect(isLiveProcess(pid.pid, pid.startTicks)).toBe(true);
    process.kill(-pid.pid, "SIGKILL");
    await waitForStatus(runtime, id, (s) => s.state === "exited");
  });

  test("start times: the process's own stat, and the monitor's date output", () => {
    const ticks = processStartTicks(process.pid);
    expect(ticks).toMatch(/^\d+$/);
    expect(isLiveProcess(process.pid, ticks as string)).toBe(true);
    expect(isLiveProcess(process.pid, `${ticks}0`)).toBe(false);
    expect(processStartTicks(0)).toBeUndefined();
    expect(parseMonitorTime("1767268800123456789", "/nonexistent")).toBe(1767268800123.456);
    // busybox date prints %N literally: the second is kept (the file's mtime is used when it exists).
    expect(parseMonitorTime("1767268800%N", "/nonexistent")).toBe(1767268800000);
    expect(parseMonitorTime("garbage", "/nonexistent")).toBeNaN();
  });

  test("ensureImage has nothing to pull", async () => {
    const runtime = make(tempRoot());
    expect(await runtime.ensureImage(contractContainer("x", ["true"]))).toEqual({ pulled: false, durationMs: 0 });
  });
});
