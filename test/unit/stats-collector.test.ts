/**
 * The stats collector over fake cgroup trees (v1 and v2) and a fake /proc, stepped by the fake
 * clock: two readings give usageNanoCores and the metrics.k8s.io window, the Summary carries the
 * kubelet's fields, /metrics/resource the kubelet's names with the readings' own timestamps.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Cgroups, detectCgroupMode } from "../../src/runtime/process/cgroups.ts";
import { readCgroupUsage } from "../../src/runtime/process/cgroup-usage.ts";
import type { ContainerUsage } from "../../src/runtime/runtime.ts";
import { StatsCollector } from "../../src/stats/collector.ts";
import { goFloat } from "../../src/stats/exposition.ts";
import type { Summary } from "../../src/stats/summary.ts";
import type { V1Pod } from "../../src/v1/v1.ts";
import { fakeV1, fakeV2 } from "../cgroup-fixtures.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const STARTED = "2026-01-01T11:59:00Z";

function runningPod(): V1Pod {
  return {
    metadata: { name: "web-lab", namespace: "demo", uid: "uid-web", labels: { app: "web" } },
    spec: { containers: [] } as unknown as V1Pod["spec"],
    status: {
      phase: "Running",
      startTime: STARTED,
      containerStatuses: [
        { name: "web", ready: true, restartCount: 0, containerID: "process://c1", state: { running: { startedAt: STARTED } } },
        { name: "gone", ready: false, restartCount: 1, containerID: "process://c0", state: { terminated: { exitCode: 1, reason: "Error" } } as never },
      ],
    },
  };
}

function fakeProc(dir: string, busyTicks: number): void {
  mkdirSync(join(dir, "sys", "kernel"), { recursive: true });
  writeFileSync(join(dir, "stat"), `cpu  ${busyTicks} 0 0 5000 10 0 0 0 0 0\ncpu0 1 2 3 4\nbtime 1767225600\n`);
  writeFileSync(join(dir, "meminfo"), "MemTotal:        8000000 kB\nMemFree:         2000000 kB\nAnonPages:       1000000 kB\nInactive(file):  1000000 kB\nSwapTotal:       1000000 kB\nSwapFree:         900000 kB\n");
  writeFileSync(join(dir, "sys", "kernel", "pid_max"), "4194304\n");
  writeFileSync(join(dir, "loadavg"), "0.10 0.20 0.30 2/345 999\n");
}

/** A collector over `cgroups`, reading container c1 as the process runtime does. */
function collector(clock: FakeClock, cgroups: Cgroups, proc: string, fsPath: string) {
  const runtime = {
    async containerUsage(id: string): Promise<ContainerUsage | undefined> {
      const dirs = cgroups.usageDirs(id);
      return dirs && { ...(await readCgroupUsage(dirs, clock.now())), logsUsedBytes: 300 };
    },
  };
  return new StatsCollector({ nodeName: "lab", runtime, pods: () => [runningPod()], clock, intervalMs: 10_000, node: { proc, fsPath } });
}

for (const version of ["v1", "v2"] as const) {
  test(`cgroup ${version}: two readings 10 s apart give nanocores, the working set and the kubelet's Summary`, async () => {
    using dir = tempDir();
    const root = join(dir.path, "cg");
    mkdirSync(root);
    let mode;
    if (version === "v1") {
      const mounts = fakeV1(root);
      mkdirSync(join(root, "cpuacct"));
      mode = detectCgroupMode(`${mounts}\n40 31 0:40 / ${join(root, "cpuacct")} rw,relatime - cgroup cgroup rw,cpuacct`);
    } else {
      mode = detectCgroupMode(fakeV2(root));
    }
    const cgroups = new Cgroups(mode, "db1");
    expect(cgroups.prepare()).toBeUndefined();
    const created = cgroups.create("c1", {});
    // Joined for accounting though no cpu limit is set.
    expect("join" in created && created.join.length).toBe(version === "v1" ? 2 : 1);
    const dirs = cgroups.usageDirs("c1")!;
    const cpuFile = dirs.kind === "v2" ? join(dirs.dir, "cpu.stat") : join(dirs.cpuacct!, "cpuacct.usage");
    const writeCpu = (nanos: number) => writeFileSync(cpuFile, dirs.kind === "v2" ? `usage_usec ${nanos / 1000}\nuser_usec 1\n` : `${nanos}\n`);
    if (dirs.kind === "v2") {
      writeFileSync(join(dirs.dir, "memory.current"), "50000000\n");
      writeFileSync(join(dirs.dir, "memory.stat"), "anon 30000000\ninactive_file 20000000\npgfault 7\npgmajfault 1\n");
      writeFileSync(join(dirs.dir, "memory.max"), "104857600\n");
      writeFileSync(join(dirs.dir, "memory.swap.current"), "1000000\n");
      writeFileSync(join(dirs.dir, "memory.swap.max"), "10000000\n");
    } else {
      writeFileSync(join(dirs.memory!, "memory.usage_in_bytes"), "50000000\n");
      writeFileSync(join(dirs.memory!, "memory.stat"), "rss 1\ntotal_rss 30000000\ntotal_inactive_file 20000000\ntotal_pgfault 7\ntotal_pgmajfault 1\n");
      writeFileSync(join(dirs.memory!, "memory.limit_in_bytes"), "104857600\n");
      // memsw is memory plus swap.
      writeFileSync(join(dirs.memory!, "memory.memsw.usage_in_bytes"), "51000000\n");
      writeFileSync(join(dirs.memory!, "memory.memsw.limit_in_bytes"), "114857600\n");
    }
    const proc = join(dir.path, "proc");
    const clock = new FakeClock();
    const stats = collector(clock, cgroups, proc, dir.path);

    fakeProc(proc, 100_000);
    writeCpu(2_000_000_000);
    stats.start();
    stats.start();
    await stats.sample();
    // One reading: no rate yet, so no metrics.k8s.io figures.
    expect(stats.nodeUsage()).toBeUndefined();
    expect(stats.podUsage("uid-web")).toBeUndefined();
    const first = (await stats.summary()) as Summary;
    expect(first.pods[0]!.containers[0]!.cpu).toEqual({ time: "2026-01-01T12:00:00Z", usageCoreNanoSeconds: 2_000_000_000 });

    // 7.5 s of CPU over 10 s: 750m; the node's /proc/stat gains 1500 ticks (15 s of CPU over 10 s).
    writeCpu(9_500_000_000);
    fakeProc(proc, 101_500);
    clock.step(10_000);
    await stats.sample();
    expect(stats.podUsage("uid-web")).toEqual([{ name: "web", timestamp: clock.now(), windowMs: 10_000, cpuNanoCores: 750_000_000, memoryBytes: 30_000_000 }]);
    expect(stats.nodeUsage()).toEqual({ timestamp: clock.now(), windowMs: 10_000, cpuNanoCores: 1_500_000_000, memoryBytes: 5_120_000_000 });

    const summary = (await stats.summary()) as Summary;
    const time = "2026-01-01T12:00:10Z";
    expect(summary.node).toMatchObject({
      nodeName: "lab",
      startTime: "2026-01-01T00:00:00Z",
      cpu: { time, usageNanoCores: 1_500_000_000, usageCoreNanoSeconds: 101_500 * 10_000_000 },
      memory: { time, usageBytes: 6_144_000_000, workingSetBytes: 5_120_000_000, availableBytes: 3_072_000_000, rssBytes: 1_024_000_000 },
      rlimit: { time, maxpid: 4194304, curproc: 345 },
      swap: { time, swapAvailableBytes: 921_600_000, swapUsageBytes: 102_400_000 },
    });
    expect(summary.node.fs?.capacityBytes).toBeGreaterThan(0);
    expect(summary.pods).toHaveLength(1);
    const [podStats] = summary.pods;
    expect(podStats).toMatchObject({
      podRef: { name: "web-lab", namespace: "demo", uid: "uid-web" },
      startTime: STARTED,
      cpu: { time, usageNanoCores: 750_000_000, usageCoreNanoSeconds: 9_500_000_000 },
      memory: { time, usageBytes: 50_000_000, workingSetBytes: 30_000_000, rssBytes: 30_000_000 },
      "ephemeral-storage": { time, usedBytes: 300 },
      swap: { time, swapUsageBytes: 1_000_000 },
    });
    // Only the running container; the limit gives availableBytes (limit less the working set).
    expect(podStats!.containers).toEqual([
      {
        name: "web",
        startTime: STARTED,
        cpu: { time, usageNanoCores: 750_000_000, usageCoreNanoSeconds: 9_500_000_000 },
        memory: { time, availableBytes: 104_857_600 - 30_000_000, usageBytes: 50_000_000, workingSetBytes: 30_000_000, rssBytes: 30_000_000, pageFaults: 7, majorPageFaults: 1 },
        // A 10 MB swap limit, 1 MB of it in use.
        swap: { time, swapAvailableBytes: 9_000_000, swapUsageBytes: 1_000_000 },
        logs: expect.objectContaining({ time, usedBytes: 300 }),
      },
    ]);

    const text = await stats.resourceMetrics();
    const at = clock.now();
    expect(text).toContain("# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n# TYPE container_cpu_usage_seconds_total counter\n");
    expect(text).toContain(`container_cpu_usage_seconds_total{container="web",namespace="demo",pod="web-lab"} 9.5 ${at}\n`);
    expect(text).toContain(`container_memory_working_set_bytes{container="web",namespace="demo",pod="web-lab"} 3e+07 ${at}\n`);
    expect(text).toContain(`container_start_time_seconds{container="web",namespace="demo",pod="web-lab"} 1.76726874e+09\n`);
    expect(text).toContain(`node_cpu_usage_seconds_total 1015 ${at}\n`);
    expect(text).toContain(`node_memory_working_set_bytes 5.12e+09 ${at}\n`);
    expect(text).toContain(`pod_cpu_usage_seconds_total{namespace="demo",pod="web-lab"} 9.5 ${at}\n`);
    expect(text).toContain(`pod_memory_working_set_bytes{namespace="demo",pod="web-lab"} 3e+07 ${at}\n`);
    expect(text).toContain(`container_swap_usage_bytes{container="web",namespace="demo",pod="web-lab"} 1e+06 ${at}\n`);
    expect(text).toContain(`container_swap_limit_bytes{container="web",namespace="demo",pod="web-lab"} 1e+07 ${at}\n`);
    expect(text).toContain(`# HELP node_swap_usage_bytes [ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems\n# TYPE node_swap_usage_bytes gauge\nnode_swap_usage_bytes 1.024e+08 ${at}\n`);
    expect(text).toContain(`pod_swap_usage_bytes{namespace="demo",pod="web-lab"} 1e+06 ${at}\n`);
    // Families by name, as client_golang's registry writes them.
    const names = [...text.matchAll(/^# TYPE (\S+)/gm)].map((match) => match[1]!);
    expect(names).toEqual([...names].sort());
    expect(text).toEndWith("# TYPE resource_scrape_error gauge\nresource_scrape_error 0\n");
    stats.stop();
    stats.stop();
    expect(clock.pendingTimers()).toBe(0);
  });
}

test("the timer reads again every interval; a restarted container (new id) starts without a rate; a gone one is forgotten", async () => {
  using dir = tempDir();
  const clock = new FakeClock();
  let cpu = 0;
  let ids = ["c1"];
  const readings: string[] = [];
  const runtime = {
    async containerUsage(id: string): Promise<ContainerUsage | undefined> {
      readings.push(id);
      return { at: clock.now(), cpuUsageCoreNanoSeconds: (cpu += 1_000_000_000), memory: { usageBytes: 10, workingSetBytes: 8 } };
    },
    imageFsUsage: async () => ({ path: dir.path, usedBytes: 1234 }),
  };
  const pod = (): V1Pod => ({
    metadata: { name: "p", namespace: "demo", uid: "u" },
    spec: { containers: [] } as unknown as V1Pod["spec"],
    status: { phase: "Running", containerStatuses: ids.map((id) => ({ name: "c", ready: true, restartCount: 0, containerID: `docker://${id}`, state: { running: { startedAt: STARTED } } })) },
  });
  const stats = new StatsCollector({ nodeName: "lab", runtime, pods: () => [pod()], clock, intervalMs: 2_000, node: { proc: join(dir.path, "none"), fsPath: dir.path } });
  stats.start();
  await stats.sample();
  expect(readings).toEqual(["c1"]);
  clock.step(2_000);
  await stats.sample();
  expect(readings).toEqual(["c1", "c1"]);
  expect(stats.podUsage("u")).toEqual([{ name: "c", timestamp: clock.now(), windowMs: 2_000, cpuNanoCores: 500_000_000, memoryBytes: 8 }]);
  ids = ["c2"];
  clock.step(2_000);
  await stats.sample();
  expect(stats.podUsage("u")).toBeUndefined();
  ids = [];
  clock.step(2_000);
  await stats.sample();
  expect(((await stats.summary()) as Summary).pods).toEqual([]);
  // No /proc here: the node has no CPU or memory figures, only its filesystem's.
  const { node } = (await stats.summary()) as Summary;
  expect([node.cpu, node.memory, node.rlimit, node.startTime]).toEqual([undefined, undefined, undefined, "1970-01-01T00:00:00Z"]);
  expect(node.fs?.capacityBytes).toBeGreaterThan(0);
  // The image filesystem: the images' bytes on the filesystem of the engine's root.
  expect(node.runtime?.imageFs).toMatchObject({ usedBytes: 1234, capacityBytes: node.fs!.capacityBytes });
  stats.stop();
});

test("a runtime failure is resource_scrape_error 1, said once, and the other containers are still read", async () => {
  using dir = tempDir();
  const clock = new FakeClock();
  const logged: string[] = [];
  const runtime = {
    async containerUsage(id: string): Promise<ContainerUsage | undefined> {
      if (id === "bad") throw new Error("engine unreachable");
      return { at: clock.now(), cpuUsageCoreNanoSeconds: 1, memory: { usageBytes: 1, workingSetBytes: 1 } };
    },
  };
  const pod: V1Pod = {
    metadata: { name: "p", namespace: "demo", uid: "u" },
    spec: { containers: [] } as unknown as V1Pod["spec"],
    status: { phase: "Running", containerStatuses: ["bad", "good"].map((id) => ({ name: id, ready: true, restartCount: 0, containerID: `docker://${id}`, state: { running: { startedAt: STARTED } } })) },
  };
  const stats = new StatsCollector({ nodeName: "lab", runtime, pods: () => [pod], clock, node: { proc: dir.path, fsPath: dir.path }, log: (line) => logged.push(line) });
  await stats.sample();
  await stats.sample();
  expect(logged).toEqual(["stats: container bad: engine unreachable"]);
  const text = await stats.resourceMetrics();
  expect(text).toContain("resource_scrape_error 1\n");
  expect(text).toContain('container_cpu_usage_seconds_total{container="good",namespace="demo",pod="p"} 1e-09');
});

test("values print as Go's strconv 'g', as expfmt writes them", () => {
  expect([0, 1, 9.5, 123456, 1234567, 1e6, 0.0001, 0.00001, 1.5e-9, 1767268740].map(goFloat)).toEqual(["0", "1", "9.5", "123456", "1.234567e+06", "1e+06", "0.0001", "1e-05", "1.5e-09", "1.76726874e+09"]);
});

test("emptyDir volumes: walked like du, in ephemeral-storage unless medium Memory, again only after the volume period", async () => {
  using dir = tempDir();
  const clock = new FakeClock();
  const volumes = join(dir.path, "volumes");
  mkdirSync(join(volumes, "cache", "sub"), { recursive: true });
  mkdirSync(join(volumes, "shm"));
  writeFileSync(join(volumes, "cache", "sub", "data"), Buffer.alloc(64 * 1024, 1));
  const runtime = {
    async containerUsage(): Promise<ContainerUsage> {
      return { at: clock.now(), cpuUsageCoreNanoSeconds: 1, logsUsedBytes: 100 };
    },
    emptyDirPath: (uid: string, name: string) => (uid === "uid-web" ? join(volumes, name) : "/nonexistent"),
  };
  const pod = runningPod();
  (pod.spec as any).volumes = [{ name: "cache", emptyDir: {} }, { name: "shm", emptyDir: { medium: "Memory" } }, { name: "host", hostPath: { path: "/" } }];
  const stats = new StatsCollector({ nodeName: "lab", runtime, pods: () => [pod], clock, intervalMs: 10_000, volumeIntervalMs: 60_000, node: { proc: dir.path, fsPath: dir.path } });
  await stats.sample();
  const volumeOf = async (name: string) => ((await stats.summary()) as Summary).pods[0]!.volume!.find((volume) => volume.name === name)!;
  const cache = await volumeOf("cache");
  // Two directories and the file; 64 KiB allocated at least (du's blocks).
  expect(cache).toMatchObject({ name: "cache", time: "2026-01-01T12:00:00Z", inodesUsed: 3 });
  expect(cache.usedBytes!).toBeGreaterThanOrEqual(64 * 1024);
  expect(cache.capacityBytes!).toBeGreaterThan(0);
  const shm = await volumeOf("shm");
  expect(((await stats.summary()) as Summary).pods[0]!["ephemeral-storage"]!.usedBytes).toBe(100 + cache.usedBytes!);
  expect(((await stats.summary()) as Summary).pods[0]!.volume!.map((volume) => volume.name)).toEqual(["cache", "shm"]);
  expect(shm.inodesUsed).toBe(1);

  writeFileSync(join(volumes, "cache", "more"), Buffer.alloc(64 * 1024, 1));
  clock.step(10_000);
  await stats.sample();
  expect((await volumeOf("cache")).inodesUsed).toBe(3);
  clock.step(50_000);
  await stats.sample();
  expect(await volumeOf("cache")).toMatchObject({ time: "2026-01-01T12:01:00Z", inodesUsed: 4 });
});

test("the containers are read only while the figures are asked for: a request reads them at once, the timer goes on for the demand window, then stops and forgets them", async () => {
  using dir = tempDir();
  const clock = new FakeClock();
  const readings: number[] = [];
  const runtime = {
    async containerUsage(): Promise<ContainerUsage | undefined> {
      readings.push(clock.now());
      return { at: clock.now(), cpuUsageCoreNanoSeconds: readings.length * 1_000_000_000, memory: { usageBytes: 10, workingSetBytes: 8 } };
    },
  };
  const pod: V1Pod = {
    metadata: { name: "p", namespace: "demo", uid: "u" },
    spec: { containers: [] } as unknown as V1Pod["spec"],
    status: { phase: "Running", containerStatuses: [{ name: "c", ready: true, restartCount: 0, containerID: "docker://c1", state: { running: { startedAt: STARTED } } }] },
  };
  const stats = new StatsCollector({ nodeName: "lab", runtime, pods: () => [pod], clock, intervalMs: 10_000, node: { proc: join(dir.path, "none"), fsPath: dir.path } });
  const settle = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  stats.start();
  for (let i = 0; i < 6; i++) {
    clock.step(10_000);
    await settle();
  }
  // A minute with nobody asking: the node's rounds only.
  expect(readings).toEqual([]);

  const start = clock.now();
  const first = (await stats.summary()) as Summary;
  expect(readings).toEqual([start]);
  expect(first.pods[0]!.containers[0]!.cpu?.usageCoreNanoSeconds).toBe(1_000_000_000);
  clock.step(10_000);
  await settle();
  expect(readings).toEqual([start, start + 10_000]);
  // metrics.k8s.io has its window from the second reading.
  expect(stats.podUsage("u")).toMatchObject([{ name: "c", windowMs: 10_000, cpuNanoCores: 100_000_000 }]);

  // Asked at start + 10 s: read every round until five minutes later, then no more, and the figures are gone.
  for (let i = 0; i < 35; i++) {
    clock.step(10_000);
    await settle();
  }
  const lastRead = start + 10_000 + 300_000;
  expect(readings.at(-1)).toBe(lastRead);
  expect(readings.filter((at) => at > lastRead)).toEqual([]);
  expect(stats.podUsage("u")).toBeUndefined();
  await stats.stop();
});
