/**
 * In-place resize (KEP-1287, GA in 1.35) on the fake runtime and clock: a pod updated with new
 * container resources keeps its containers and gets the values in place, or restarts the one whose
 * resizePolicy asks for it; a resize that does not fit waits as Deferred and is taken once room is
 * made; a memory limit below the usage is not applied (reason Error) until the usage drops. The
 * status carries the allocated and the actuated resources and the two resize conditions; the
 * events are the kubelet's.
 */
import { describe, expect, test } from "bun:test";
import type { ContainerResizePolicy, PodSpec, ResourceRequirements } from "../../src/manifest/types.ts";
import { podStatus } from "../../src/kubelet/status/pod-status.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

const Mi = 1024n * 1024n;

function resources(cpu: [string, string], memory: [string, string]): ResourceRequirements {
  return { requests: { cpu: cpu[0], memory: memory[0] }, limits: { cpu: cpu[1], memory: memory[1] } };
}

function sized(name: string, value: ResourceRequirements, resizePolicy?: ContainerResizePolicy[]): PodSpec {
  return pod({ name, grace: 5, containers: [container(name, { resources: value, ...(resizePolicy && { resizePolicy }) })] });
}

/** The same pod object with new resources and the next generation, as the API server hands it over after `kubectl patch --subresource resize`. */
function resized(base: PodSpec, value: ResourceRequirements, generation = 2): PodSpec {
  const metadata = { ...(base.manifest.metadata as Record<string, unknown>), generation };
  return {
    ...base,
    containers: base.containers.map((c) => ({ ...c, resources: value })),
    manifest: { ...base.manifest, metadata },
    configHash: `${base.configHash}-g${generation}`,
  };
}

/** A harness (on a node of `allocatable`, when given) with `pods` running. */
async function started(pods: PodSpec[], allocatable?: { cpuMillis: bigint; memoryBytes: bigint; ephemeralStorageBytes: bigint; pods: number }) {
  const h = harness(allocatable ? { allocatable } : {});
  await h.kubelet.sync(desired(...pods));
  await h.advance(1);
  return h;
}

/** A node of one cpu, with `web` and `other` at 400m each: `bigger` asks 700m for web, which does not fit beside other. */
async function smallNode() {
  const web = sized("web", resources(["400m", "400m"], ["64Mi", "64Mi"]));
  const other = sized("other", resources(["400m", "400m"], ["64Mi", "64Mi"]));
  const h = await started([web, other], { cpuMillis: 1000n, memoryBytes: 1024n * Mi, ephemeralStorageBytes: 10n * 1024n * Mi, pods: 10 });
  return { h, web, other, bigger: resized(web, resources(["700m", "700m"], ["64Mi", "64Mi"])) };
}

const eventLines = (h: ReturnType<typeof harness>, from: number) => h.events.slice(from).map((e) => `${e.type} ${e.reason}: ${e.message}`);

describe("in-place resize", () => {
  test("NotRequired: the running container gets the new values through the runtime, keeps its id and restart count, and the status says so", async () => {
    const base = sized("web", resources(["100m", "200m"], ["64Mi", "128Mi"]));
    const h = await started([base]);
    const before = h.pod(base.key)!.app[0]!;
    const id = before.containerId;
    const mark = h.events.length;
    await h.kubelet.sync(desired(resized(base, resources(["150m", "300m"], ["64Mi", "128Mi"]))));
    await h.advance(1);
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual(["resize web cpu=150m/300m memory=64Mi/128Mi"]);
    const web = h.pod(base.key)!.app[0]!;
    expect([web.state, web.containerId, restartCountOf(web)]).toEqual(["running", id, 0]);
    const summary = '{"containers":[{"name":"web","resources":{"limits":{"cpu":"300m","memory":"128Mi"},"requests":{"cpu":"150m","memory":"64Mi"}}}],"generation":2}';
    expect(eventLines(h, mark)).toEqual([`Normal ResizeStarted: Pod resize started: ${summary}`, `Normal ResizeCompleted: Pod resize completed: ${summary}`]);
    const status = podStatus(h.pod(base.key)!, { runtimeName: "fake" });
    expect(status.containerStatuses![0]!.resources).toEqual({ limits: { cpu: "300m", memory: "128Mi" }, requests: { cpu: "150m", memory: "64Mi" } });
    expect(status.containerStatuses![0]!.allocatedResources).toEqual({ cpu: "150m", memory: "64Mi" });
    expect(status.conditions!.map((c) => c.type)).not.toContain("PodResizeInProgress");
  });

  test("RestartContainer for memory: a memory change restarts the container with the new values, without a back-off wait", async () => {
    const base = sized("db", resources(["100m", "100m"], ["64Mi", "64Mi"]), [{ resourceName: "memory", restartPolicy: "RestartContainer" }]);
    const h = await started([base]);
    const mark = h.events.length;
    await h.kubelet.sync(desired(resized(base, resources(["100m", "100m"], ["96Mi", "96Mi"]))));
    await h.advance(1);
    expect(eventLines(h, mark).filter((line) => /Killing|Started|Resize/.test(line))).toEqual([
      expect.stringMatching(/^Normal ResizeStarted: /),
      "Normal Killing: Container db resize requires restart",
      "Normal Started: Started container db",
      expect.stringMatching(/^Normal ResizeCompleted: /),
    ]);
    const db = h.pod(base.key)!.app[0]!;
    expect([db.state, restartCountOf(db), db.lastTermination?.killCause]).toEqual(["running", 1, "resize"]);
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual([]);
    const newest = [...h.runtime.containers.values()].filter((c) => c.config.container.name === "db").at(-1)!;
    expect(newest.config.container.resources?.limits.memory).toBe("96Mi");
  });

  test("a cpu change under a memory-only RestartContainer policy is applied in place", async () => {
    const base = sized("db", resources(["100m", "100m"], ["64Mi", "64Mi"]), [{ resourceName: "memory", restartPolicy: "RestartContainer" }]);
    const h = await started([base]);
    await h.kubelet.sync(desired(resized(base, resources(["200m", "200m"], ["64Mi", "64Mi"]))));
    await h.advance(1);
    expect(restartCountOf(h.pod(base.key)!.app[0]!)).toBe(0);
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual(["resize db cpu=200m/200m memory=64Mi/64Mi"]);
  });

  test("a resize that does not fit waits as Deferred with admission's message, and is taken once another pod went", async () => {
    const { h, web, other, bigger } = await smallNode();
    const mark = h.events.length;
    await h.kubelet.sync(desired(bigger, other));
    await h.advance(1);
    const message = "Node didn't have enough resource: cpu, requested: 700, used: 400, capacity: 1000";
    expect(eventLines(h, mark)).toEqual([
      `Warning ResizeDeferred: Pod resize Deferred: {"containers":[{"name":"web","resources":{"limits":{"cpu":"700m","memory":"64Mi"},"requests":{"cpu":"700m","memory":"64Mi"}}}],"generation":2,"error":"${message}"}`,
    ]);
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual([]);
    let status = podStatus(h.pod(web.key)!, { runtimeName: "fake" });
    expect(status.conditions!.find((c) => c.type === "PodResizePending")).toMatchObject({ status: "True", reason: "Deferred", message });
    expect(status.containerStatuses![0]!.allocatedResources).toEqual({ cpu: "400m", memory: "64Mi" });
    // Walked again with nothing changed: still waiting, and no second event.
    await h.kubelet.sync(desired(bigger, other));
    await h.advance(1);
    expect(h.events.slice(mark).filter((e) => e.reason === "ResizeDeferred")).toHaveLength(1);

    await h.kubelet.sync(desired(bigger));
    await h.advance(6);
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual(["resize web cpu=700m/700m memory=64Mi/64Mi"]);
    status = podStatus(h.pod(web.key)!, { runtimeName: "fake" });
    expect(status.conditions!.map((c) => c.type)).not.toContain("PodResizePending");
    expect(status.containerStatuses![0]!.allocatedResources).toEqual({ cpu: "700m", memory: "64Mi" });
  });

  test("a new pod is admitted against the waiting pod's allocation, not against what it asks for", async () => {
    const { h, other, bigger } = await smallNode();
    await h.kubelet.sync(desired(bigger, other));
    const third = sized("third", resources(["200m", "200m"], ["64Mi", "64Mi"]));
    await h.kubelet.sync(desired(bigger, other, third));
    await h.advance(1);
    expect(h.pod(third.key)!.rejected).toBeUndefined();
    expect(h.pod(third.key)!.app[0]!.state).toBe("running");
  });

  test("a memory limit below the usage is not applied: PodResizeInProgress says why (reason Error) until the usage drops", async () => {
    const base = sized("cache", resources(["100m", "100m"], ["64Mi", "200Mi"]));
    const h = await started([base]);
    h.runtime.memoryUsage.set("cache", 150 * 1024 * 1024);
    const mark = h.events.length;
    await h.kubelet.sync(desired(resized(base, resources(["100m", "100m"], ["64Mi", "100Mi"]))));
    await h.advance(1);
    const error = `cannot decrease memory limits: attempting to set container "cache" memory limit (${100n * Mi}) below current usage (${150 * 1024 * 1024})`;
    expect(eventLines(h, mark).at(-1)).toBe(
      `Warning ResizeError: Pod resize error: {"containers":[{"name":"cache","resources":{"limits":{"cpu":"100m","memory":"100Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}],"generation":2,"error":${JSON.stringify(error)}}`,
    );
    let status = podStatus(h.pod(base.key)!, { runtimeName: "fake" });
    expect(status.conditions!.find((c) => c.type === "PodResizeInProgress")).toMatchObject({ status: "True", reason: "Error", message: error });
    expect(status.containerStatuses![0]!.resources?.limits?.memory).toBe("200Mi");
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual([]);

    h.runtime.memoryUsage.set("cache", 10 * 1024 * 1024);
    await h.advance(11);
    expect(h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual(["resize cache cpu=100m/100m memory=64Mi/100Mi"]);
    status = podStatus(h.pod(base.key)!, { runtimeName: "fake" });
    expect(status.conditions!.map((c) => c.type)).not.toContain("PodResizeInProgress");
    expect(status.containerStatuses![0]!.resources?.limits?.memory).toBe("100Mi");
    expect(h.events.slice(mark).filter((e) => e.reason === "ResizeError")).toHaveLength(1);
  });

  test("a runtime that refuses the values leaves the resize in progress with its error", async () => {
    const base = sized("web", resources(["100m", "100m"], ["64Mi", "64Mi"]));
    const h = await started([base]);
    h.runtime.updateError = "engine said no";
    await h.kubelet.sync(desired(resized(base, resources(["200m", "200m"], ["64Mi", "64Mi"]))));
    await h.advance(1);
    const condition = podStatus(h.pod(base.key)!, { runtimeName: "fake" }).conditions!.find((c) => c.type === "PodResizeInProgress");
    expect(condition).toMatchObject({ reason: "Error", message: 'failed to update resources of container "web": engine said no' });
    expect(h.pod(base.key)!.app[0]!.state).toBe("running");
  });

  test("a pod never resized reports its resources and allocatedResources once its container exists, as the kubelet does", async () => {
    const base = sized("web", resources(["100m", "200m"], ["64Mi", "128Mi"]));
    const h = await started([base]);
    const status = podStatus(h.pod(base.key)!, { runtimeName: "fake" }).containerStatuses![0]!;
    expect([status.resources, status.allocatedResources]).toEqual([{ limits: { cpu: "200m", memory: "128Mi" }, requests: { cpu: "100m", memory: "64Mi" } }, { cpu: "100m", memory: "64Mi" }]);
    const bare = pod({ name: "bare", containers: [container("bare")] });
    await h.kubelet.sync(desired(base, bare));
    await h.advance(1);
    const bareStatus = podStatus(h.pod(bare.key)!, { runtimeName: "fake" }).containerStatuses![0]!;
    expect([bareStatus.resources, bareStatus.allocatedResources]).toEqual([{}, undefined]);
  });
});

test("a pod-level resize restarts nothing: pod-level resources are counted at admission, not enforced as a pod cgroup", async () => {
  const base = { ...sized("web", resources(["100m", "200m"], ["64Mi", "128Mi"])), resources: { requests: { cpu: "200m" }, limits: { cpu: "400m" } } };
  const h = await started([base]);
  const id = h.pod(base.key)!.app[0]!.containerId;
  const next = { ...base, resources: { requests: { cpu: "300m" }, limits: { cpu: "500m" } }, configHash: `${base.configHash}-pod-level` };
  await h.kubelet.sync(desired(next));
  await h.advance(1);
  const web = h.pod(base.key)!;
  expect([web.app[0]!.containerId, restartCountOf(web.app[0]!), web.spec.resources?.requests.cpu]).toEqual([id, 0, "300m"]);
  expect(web.deletionRequestedAt).toBeUndefined();
});
