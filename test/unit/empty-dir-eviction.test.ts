/**
 * The eviction manager's emptyDir sizeLimit check in the loop, on the fake runtime and clock: a
 * volume measured past its limit on the 10 s round evicts the pod with the kubelet's message
 * (Failed, reason Evicted, containers stopped with the eviction grace, nothing restarted); under the
 * limit, without a limit, and for a static pod (critical: the kubelet never evicts one) nothing happens.
 */
import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { podStatus } from "../../src/kubelet/status/pod-status.ts";
import type { PodSpec, Volume } from "../../src/manifest/types.ts";
import type { DirUsage } from "../../src/eviction/dir-usage.ts";
import { memoryMediumFallback } from "../../src/runtime/process/process-tmpfs.ts";
import { NO_METRICS } from "../../src/stats/kubelet-metrics.ts";
import { memoryMediumSizeBytes } from "../../src/manifest/memory-medium.ts";

const MI = 1024 * 1024;

function setup(usage: Record<string, number>) {
  const measured: string[] = [];
  const logs: string[] = [];
  const evictions: string[] = [];
  const h = harness({
    metrics: { ...NO_METRICS, podEvicted: (signal) => evictions.push(signal) },
    measureDir: async (path): Promise<DirUsage> => {
      measured.push(path);
      return { bytes: usage[path] ?? 0, complete: true };
    },
    log: (line) => logs.push(line),
  });
  h.runtime.emptyDirPath = (podUid: string, volume: string) => `/volumes/${nameOfUid(podUid)}/${volume}`;
  h.kubelet.start(); // the runtime now has volume paths: the 10 s round starts
  return { h, measured, logs, evictions };
}

/** pod-builder's uids are `uid-NAME-REVISION`. */
function nameOfUid(uid: string): string {
  return uid.replace(/^uid-(.*)-\d+$/, "$1");
}

function limitedPod(name: string, volumes: Volume[], api = true): PodSpec {
  const spec = pod({ name, node: "", grace: 30, containers: [container(name, { stopSignal: "SIGUSR1" })] });
  spec.volumes = volumes;
  if (api) spec.api = { createdAt: 0 };
  return spec;
}

const scratch = (sizeLimit?: string, bytes?: number): Volume => ({ name: "scratch", type: "emptyDir", ...(sizeLimit && { sizeLimit, sizeLimitBytes: bytes }) });

describe("emptyDir sizeLimit eviction", () => {
  test("past its limit on the next round: Evicted with the kubelet's message, Failed, stopped within the eviction grace, never restarted", async () => {
    const { h, evictions } = setup({ "/volumes/web/scratch": 2 * MI });
    const web = limitedPod("web", [scratch("1Mi", MI)]);
    h.runtime.behaviours.set("web", { ignoreSigterm: true });
    await h.kubelet.sync(desired(web));
    await h.advance(9);
    expect(h.events.some((e) => e.reason === "Evicted")).toBe(false);
    await h.advance(1);
    const evicted = h.events.find((e) => e.reason === "Evicted")!;
    expect(evicted.type).toBe("Warning");
    expect(evicted.message).toBe('Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ');
    // kubelet_evictions counts it under the kubelet's signal for a local-storage limit.
    expect(evictions).toEqual(["emptydirfs.limit"]);
    const record = h.pod(web.key)!;
    expect(record.phase).toBe("Failed");
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill web SIGUSR1"]);
    // The eviction's 1 s grace is under the kubelet's 2 s floor.
    await h.advance(2);
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill web SIGUSR1", "kill web SIGKILL"]);
    await h.advance(60);
    expect(h.runtime.startsOf("web")).toBe(1);
    const status = podStatus(record, { runtimeName: "fake" });
    expect({ phase: status.phase, reason: status.reason, message: status.message }).toEqual({ phase: "Failed", reason: "Evicted", message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ' });
    expect(status.containerStatuses![0]!.state?.terminated?.exitCode).toBe(137);
    expect(h.events.filter((e) => e.reason === "Evicted")).toHaveLength(1);
  });

  test("at or under its limit, nothing happens; a volume without a limit is never measured", async () => {
    const { h, measured } = setup({ "/volumes/web/scratch": MI });
    const web = limitedPod("web", [scratch("1Mi", MI), { name: "free", type: "emptyDir" }]);
    await h.kubelet.sync(desired(web));
    await h.advance(30);
    expect(measured).toEqual(["/volumes/web/scratch", "/volumes/web/scratch", "/volumes/web/scratch"]);
    expect(h.pod(web.key)!.phase).toBe("Running");
  });

  test("a static pod is critical: not evicted, the agent says why once", async () => {
    const { h, logs } = setup({ "/volumes/web/scratch": 5 * MI });
    const web = limitedPod("web", [scratch("1Mi", MI)], false);
    await h.kubelet.sync(desired(web));
    await h.advance(30);
    expect(h.pod(web.key)!.phase).toBe("Running");
    expect(h.events.some((e) => e.reason === "Evicted")).toBe(false);
    expect(logs.filter((line) => line.includes("cannot evict a critical pod"))).toEqual([
      'eviction manager: cannot evict a critical pod demo/web (static pod): Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ',
    ]);
  });

  test("a round still measuring is joined, not doubled; a slow measurement never holds up a pass", async () => {
    let release!: () => void;
    let calls = 0;
    const h = harness({
      measureDir: () => {
        calls++;
        return new Promise<DirUsage>((resolve) => (release = () => resolve({ bytes: 0, complete: true })));
      },
    });
    h.runtime.emptyDirPath = (podUid: string, volume: string) => `/volumes/${nameOfUid(podUid)}/${volume}`;
    const web = limitedPod("web", [scratch("1Mi", MI)]);
    await h.kubelet.sync(desired(web));
    const first = h.kubelet.checkLocalStorage();
    const second = h.kubelet.checkLocalStorage();
    await h.kubelet.sync(desired(web)); // a pass completes while the measurement is out
    expect(calls).toBe(1);
    release();
    await Promise.all([first, second]);
  });
});

describe("a memory emptyDir the runtime cannot put in memory", () => {
  test("is said once, with a Warning event at the sandbox's creation; the warning is not kept with the sandbox", async () => {
    const h = harness();
    const run = h.runtime.runPodSandbox.bind(h.runtime);
    h.runtime.runPodSandbox = async (spec) => ({ ...(await run(spec)), warnings: [memoryMediumFallback("cache", "mounting a tmpfs needs root (the agent runs as uid 1000)")] });
    const web = limitedPod("web", [{ name: "cache", type: "emptyDir", medium: "Memory" }]);
    await h.kubelet.sync(desired(web));
    await h.advance(30);
    await h.kubelet.sync(desired(web));
    expect(h.events.filter((e) => e.reason === "MemoryMediumUnavailable").map((e) => `${e.type} ${e.message}`)).toEqual([
      'Warning emptyDir volume "cache" asks for medium Memory, but mounting a tmpfs needs root (the agent runs as uid 1000): it is a directory on the node\'s disk',
    ]);
    expect(h.pod(web.key)!.sandbox).not.toHaveProperty("warnings");
    expect(h.pod(web.key)!.phase).toBe("Running");
  });
});

describe("a memory emptyDir's size", () => {
  const sized = (limits: (string | undefined)[], sizeLimitBytes?: number, init: (string | undefined)[] = []) => {
    const spec = pod({ containers: limits.map((memory, i) => container(`c${i}`, memory ? { resources: { limits: { memory }, requests: { memory } } } : {})) });
    spec.initContainers = init.map((memory, i) => container(`i${i}`, memory ? { resources: { limits: { memory }, requests: { memory } } } : {}));
    return memoryMediumSizeBytes(spec, { name: "m", type: "emptyDir", medium: "Memory", ...(sizeLimitBytes && { sizeLimit: "x", sizeLimitBytes }) });
  };
  test("the pod's memory limit, or the sizeLimit when smaller; without a limit on every container, the sizeLimit alone", () => {
    expect(sized(["64Mi", "64Mi"])).toBe(128 * MI);
    expect(sized(["64Mi", "64Mi"], MI)).toBe(MI);
    expect(sized(["1Mi"], 64 * MI)).toBe(MI);
    expect(sized(["64Mi", undefined], 2 * MI)).toBe(2 * MI);
    expect(sized([undefined])).toBeUndefined();
    expect(sized(["1Mi"], undefined, ["8Mi"])).toBe(8 * MI);
  });
});
