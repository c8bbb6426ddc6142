/**
 * Issue 14, disk pressure: the monitor (fake statfs, fake clock) and the loop's answer to it: new
 * pods wait Pending while the pods' filesystem is below nodefs.available, and start once it clears;
 * nothing running is stopped.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskPressureMonitor, realStatfs, type DiskObservation, type FilesystemUsage } from "../../src/eviction/disk-pressure.ts";
import { parseEvictionHard } from "../../src/eviction/thresholds.ts";
import { DISK_PRESSURE_WAIT } from "../../src/kubelet/admission/admission.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { statusColumns } from "../../src/printers/pod-printer.ts";
import { FakeClock } from "../fake-clock.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

const Gi = 1n << 30n;

/** Filesystems by path, whose free space a test sets; counts the statfs calls. */
class FakeDisks {
  readonly free = new Map<string, bigint>();
  calls = 0;
  constructor(
    paths: string[],
    readonly total = 100n * Gi,
  ) {
    for (const path of paths) this.free.set(path, 50n * Gi);
  }
  statfs = (path: string): FilesystemUsage => {
    this.calls++;
    const available = this.free.get(path);
    if (available === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, statfs '${path}'`), { code: "ENOENT" });
    return { totalBytes: this.total, availableBytes: available };
  };
}

function monitor(clock: FakeClock, disks: FakeDisks, threshold = "nodefs.available<10%") {
  const changes: DiskObservation[] = [];
  const m = new DiskPressureMonitor({
    paths: [...disks.free.keys()],
    threshold: parseEvictionHard(threshold)["nodefs.available"],
    clock,
    statfs: disks.statfs,
    onChange: (observation) => changes.push(observation),
  });
  return { m, changes };
}

test("realStatfs: a directory not made yet is read on its nearest existing parent's filesystem", () => {
  const parent = mkdtempSync(join(tmpdir(), "mk-statfs-"));
  try {
    const here = realStatfs(parent);
    expect(here.totalBytes).toBeGreaterThan(0n);
    expect(realStatfs(join(parent, "not", "yet")).totalBytes).toBe(here.totalBytes);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

describe("DiskPressureMonitor", () => {
  test("pressure when any watched filesystem is below the threshold, cleared when all are above", () => {
    const clock = new FakeClock();
    const disks = new FakeDisks(["/db", "/pods"]);
    const { m, changes } = monitor(clock, disks);
    m.check();
    expect([m.pressure, changes.length]).toEqual([false, 0]);
    disks.free.set("/pods", 9n * Gi);
    m.check();
    expect(m.pressure).toBe(true);
    expect(changes.map((c) => [c.pressure, c.path, c.thresholdBytes])).toEqual([[true, "/pods", 10n * Gi]]);
    // Still under: no new change.
    m.check();
    expect(changes).toHaveLength(1);
    disks.free.set("/pods", 10n * Gi);
    m.check();
    expect(changes.map((c) => c.pressure)).toEqual([true, false]);
  });

  test("a quantity threshold is compared in bytes", () => {
    const clock = new FakeClock();
    const disks = new FakeDisks(["/db"]);
    const { m } = monitor(clock, disks, "nodefs.available<60Gi");
    m.check();
    expect(m.pressure).toBe(true);
  });

  test("looks every 10 s once started, and after a write at most once a second; never in between", () => {
    const clock = new FakeClock();
    const disks = new FakeDisks(["/db"]);
    const { m, changes } = monitor(clock, disks);
    m.start();
    m.start();
    expect(disks.calls).toBe(1);
    clock.step(9_999);
    expect(disks.calls).toBe(1);
    clock.step(1);
    expect(disks.calls).toBe(2);
    m.noteWrite();
    m.noteWrite();
    expect(disks.calls).toBe(2);
    clock.step(1000);
    disks.free.set("/db", 1n * Gi);
    m.noteWrite();
    m.noteWrite();
    expect(disks.calls).toBe(3);
    expect(changes.map((c) => c.pressure)).toEqual([true]);
    m.stop();
    clock.step(60_000);
    expect(disks.calls).toBe(3);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("a filesystem that cannot be read is said once and is not pressure", () => {
    const clock = new FakeClock();
    const disks = new FakeDisks(["/db"]);
    const said: string[] = [];
    const watched = new DiskPressureMonitor({ paths: ["/db", "/gone"], threshold: { fraction: 0.1 }, clock, statfs: disks.statfs, onChange: () => {}, onError: (path) => said.push(path) });
    watched.check();
    watched.check();
    expect(said).toEqual(["/gone"]);
    expect(watched.pressure).toBe(false);
  });

  test("starting from a recorded pressure, the first look reports the clearing", () => {
    const clock = new FakeClock();
    const disks = new FakeDisks(["/db"]);
    const changes: boolean[] = [];
    const m = new DiskPressureMonitor({ paths: ["/db"], threshold: { fraction: 0.1 }, clock, statfs: disks.statfs, initialPressure: true, onChange: (o) => changes.push(o.pressure) });
    m.check();
    expect(changes).toEqual([false]);
  });

  test("with nodefs.available turned off (0%), a recorded pressure clears and none is found", () => {
    const clock = new FakeClock();
    const disks = new FakeDisks(["/db"]);
    disks.free.set("/db", 0n);
    const changes: boolean[] = [];
    const m = new DiskPressureMonitor({ paths: ["/db"], threshold: parseEvictionHard("nodefs.available<0%")["nodefs.available"], clock, statfs: disks.statfs, initialPressure: true, onChange: (o) => changes.push(o.pressure) });
    m.check();
    expect([changes, m.pressure]).toEqual([[false], false]);
  });
});

function sleeper(name: string, cpu?: string) {
  return pod({ name, containers: [container(name, cpu ? { resources: { limits: {}, requests: { cpu } } } : {})] });
}

/** The loop with the monitor wired as `run` wires it: a change wakes the waiting pods. */
function pressuredLoop(allocatable?: { cpuMillis: bigint; memoryBytes: bigint; ephemeralStorageBytes: bigint; pods: number }) {
  let disk: DiskPressureMonitor | undefined;
  const h = harness({ node: { diskPressure: () => disk?.pressure ?? false }, ...(allocatable && { allocatable }) });
  const disks = new FakeDisks(["/db"]);
  disk = new DiskPressureMonitor({ paths: ["/db"], threshold: { fraction: 0.1 }, clock: h.clock, statfs: disks.statfs, onChange: () => h.kubelet.nodeConditionsChanged() });
  disk.start();
  return { ...h, disks, disk };
}

describe("the loop under DiskPressure", () => {
  test("a new pod waits Pending with the scheduler's reason, starts once the pressure clears; a running pod is never stopped", async () => {
    const h = pressuredLoop();
    const running = sleeper("running");
    await h.kubelet.sync(desired(running));
    await h.advance(1);
    expect(h.pod(running.key)?.phase).toBe("Running");

    h.disks.free.set("/db", 5n * Gi);
    await h.advance(10);
    expect(h.disk.pressure).toBe(true);
    const late = sleeper("late");
    await h.kubelet.sync(desired(running, late));
    await h.advance(30);
    const waiting = h.pod(late.key)!;
    expect(waiting.phase).toBe("Pending");
    expect(waiting.sandbox).toBeUndefined();
    expect(waiting.app[0]!.attempts).toBe(0);
    expect(h.events.filter((e) => e.pod === late.fullName).map((e) => [e.type, e.reason, e.message])).toEqual([["Warning", "FailedScheduling", DISK_PRESSURE_WAIT.message]]);
    const object = servedPod(waiting, { runtimeName: "fake" });
    expect(object.status).toMatchObject({ phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: DISK_PRESSURE_WAIT.message }] });
    expect(object.status?.containerStatuses).toBeUndefined();
    expect(statusColumns(object).status).toBe("Pending");
    // Nothing running was touched.
    expect(h.pod(running.key)?.phase).toBe("Running");
    expect(h.pod(running.key)?.app[0]!.attempts).toBe(1);
    expect(h.events.some((e) => e.pod === running.fullName && e.reason === "Killing")).toBe(false);

    h.disks.free.set("/db", 20n * Gi);
    await h.advance(10);
    expect(h.disk.pressure).toBe(false);
    expect(h.pod(late.key)?.phase).toBe("Running");
    expect(h.pod(late.key)?.waitingForNode).toBeUndefined();
    expect(servedPod(h.pod(late.key)!, { runtimeName: "fake" }).status?.conditions?.map((c) => c.type)).not.toContain("PodScheduled");
  });

  test("waiting pods are admitted oldest first when the pressure clears, against allocatable", async () => {
    const h = pressuredLoop({ cpuMillis: 2000n, memoryBytes: 1n << 30n, ephemeralStorageBytes: 1n << 40n, pods: 110 });
    h.disks.free.set("/db", 1n * Gi);
    await h.advance(10);
    const first = sleeper("first", "1500m");
    await h.kubelet.sync(desired(first));
    await h.advance(1);
    const second = sleeper("second", "1");
    await h.kubelet.sync(desired(first, second));
    await h.advance(1);
    expect([h.pod(first.key)?.phase, h.pod(second.key)?.phase]).toEqual(["Pending", "Pending"]);
    h.disks.free.set("/db", 50n * Gi);
    await h.advance(10);
    expect(h.pod(first.key)?.phase).toBe("Running");
    expect(h.pod(second.key)?.rejected?.reason).toBe("OutOfcpu");
  });

  test("a waiting pod whose manifest goes away is removed without ever starting", async () => {
    const h = pressuredLoop();
    h.disks.free.set("/db", 1n * Gi);
    await h.advance(10);
    const late = sleeper("late");
    await h.kubelet.sync(desired(late));
    await h.advance(1);
    await h.kubelet.sync(desired());
    await h.advance(1);
    expect(h.pod(late.key)).toBeUndefined();
    expect(h.runtime.calls.filter((c) => c.startsWith("sandbox "))).toEqual([]);
  });

  test("a waiting pod adopted by an agent that sees no pressure starts on its first sync", async () => {
    const h = harness({ node: { diskPressure: () => false } });
    const late = sleeper("late");
    const waitingRecord = { ...(await (async () => {
      const pressured = harness({ node: { diskPressure: () => true } });
      await pressured.kubelet.sync(desired(late));
      return pressured.pod(late.key)!;
    })()) };
    expect(waitingRecord.waitingForNode).toBeDefined();
    h.kubelet.pods.set(late.key, waitingRecord);
    await h.kubelet.sync(desired(late));
    await h.advance(1);
    expect(h.pod(late.key)?.phase).toBe("Running");
  });
});
