import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { statusColumns } from "../../src/printers/pod-printer.ts";

const allocatable = { cpuMillis: 2000n, memoryBytes: 1024n * 1024n * 1024n, ephemeralStorageBytes: 1n << 40n, pods: 110 };

function requesting(name: string, cpu: string, extra: Parameters<typeof pod>[0] = {}) {
  return pod({ name, containers: [container(name, { resources: { limits: {}, requests: { cpu } } })], ...extra });
}

describe("admission of new pods", () => {
  test("a pod that does not fit beside the running ones is Failed with OutOfcpu and a Warning, and never started", async () => {
    const h = harness({ allocatable });
    const small = requesting("small", "500m");
    const big = requesting("big", "3");
    await h.kubelet.sync(desired(small, big));
    await h.advance(1);
    expect(h.pod(small.key)?.phase).toBe("Running");
    const refused = h.pod(big.key)!;
    expect(refused.phase).toBe("Failed");
    expect(refused.sandbox).toBeUndefined();
    expect(refused.app[0]!.attempts).toBe(0);
    const warning = h.events.find((e) => e.pod === big.fullName && e.type === "Warning");
    expect(warning).toMatchObject({ reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 3000, used: 500, capacity: 2000" });
    const status = servedPod(refused, { runtimeName: "fake" }).status!;
    expect(status).toMatchObject({ phase: "Failed", reason: "OutOfcpu", message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 500, capacity: 2000" });
    expect(status.containerStatuses).toBeUndefined();
    expect(statusColumns(servedPod(refused, { runtimeName: "fake" })).status).toBe("OutOfcpu");
    // Level-triggered passes do not admit it again nor start it.
    await h.kubelet.sync(desired(small, big));
    await h.advance(30);
    expect(h.events.filter((e) => e.reason === "OutOfcpu")).toHaveLength(1);
    expect(h.events.filter((e) => e.pod === big.fullName).map((e) => e.reason)).toEqual(["OutOfcpu"]);
  });

  test("a pod for another OS (spec.os.name, or its kubernetes.io/os label) is refused as the kubelet's predicate refuses it; one for this node's runs", async () => {
    const h = harness();
    const base = pod({ name: "win" });
    const windows = { ...base, manifest: { ...base.manifest, spec: { ...(base.manifest.spec as object), os: { name: "windows" } } } };
    const labelled = { ...pod({ name: "labelled" }), labels: { "kubernetes.io/os": "windows" } };
    const linuxBase = pod({ name: "linux" });
    const linux = { ...linuxBase, labels: { "kubernetes.io/os": "linux" }, manifest: { ...linuxBase.manifest, spec: { ...(linuxBase.manifest.spec as object), os: { name: "linux" } } } };
    await h.kubelet.sync(desired(windows, labelled, linux));
    await h.advance(1);
    expect(servedPod(h.pod(windows.key)!, { runtimeName: "fake" }).status).toMatchObject({ phase: "Failed", reason: "PodOSNotSupported", message: "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS" });
    expect(servedPod(h.pod(labelled.key)!, { runtimeName: "fake" }).status).toMatchObject({ phase: "Failed", reason: "PodOSSelectorNodeLabelDoesNotMatch", message: "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" });
    expect(h.events.filter((e) => e.type === "Warning").map((e) => `${e.pod} ${e.reason}`)).toEqual(["win-lab PodOSNotSupported", "labelled-lab PodOSSelectorNodeLabelDoesNotMatch"]);
    expect(h.runtime.startsOf("win")).toBe(0);
    expect(h.pod(linux.key)?.phase).not.toBe("Failed");
    expect(h.runtime.startsOf("linux")).toBe(1);
  });

  test("a pod that fits runs beside the others", async () => {
    const h = harness({ allocatable });
    const one = requesting("one", "1");
    const two = requesting("two", "1");
    await h.kubelet.sync(desired(one, two));
    await h.advance(1);
    expect([h.pod(one.key)?.phase, h.pod(two.key)?.phase]).toEqual(["Running", "Running"]);
    expect(h.events.some((e) => e.reason.startsWith("OutOf"))).toBe(false);
  });

  test("once a pod has finished, its requests are free for a pod added later", async () => {
    const h = harness({ allocatable });
    h.runtime.behaviours.set("job", { exitAfterMs: 5000, exitCode: 0 });
    const job = requesting("job", "2", { restartPolicy: "Never" });
    const later = requesting("later", "2");
    await h.kubelet.sync(desired(job));
    await h.advance(1);
    await h.kubelet.sync(desired(job, requesting("early", "2")));
    expect(h.pod(requesting("early", "2").key)?.rejected?.reason).toBe("OutOfcpu");
    await h.advance(10);
    expect(h.pod(job.key)?.phase).toBe("Succeeded");
    await h.kubelet.sync(desired(job, later));
    await h.advance(1);
    expect(h.pod(later.key)?.phase).toBe("Running");
  });

  test("a refused pod whose manifest changes is admitted again as a new pod", async () => {
    const h = harness({ allocatable });
    await h.kubelet.sync(desired(requesting("big", "3")));
    await h.advance(1);
    expect(h.pod(requesting("big", "3").key)?.rejected?.reason).toBe("OutOfcpu");
    await h.kubelet.sync(desired(requesting("big", "1", { revision: 2 })));
    await h.advance(1);
    expect(h.pod(requesting("big", "1").key)?.phase).toBe("Running");
  });

  test("ephemeral-storage requests are counted: a pod beyond what is left is Failed with OutOfephemeral-storage", async () => {
    const h = harness({ allocatable: { ...allocatable, ephemeralStorageBytes: 10n << 30n } });
    const storing = (name: string, size: string) => pod({ name, containers: [container(name, { resources: { limits: {}, requests: { "ephemeral-storage": size } } })] });
    const first = storing("first", "6Gi");
    const second = storing("second", "6Gi");
    await h.kubelet.sync(desired(first));
    await h.kubelet.sync(desired(first, second));
    await h.advance(1);
    expect(h.pod(first.key)?.phase).toBe("Running");
    expect(h.pod(second.key)?.rejected).toEqual({
      reason: "OutOfephemeral-storage",
      message: `Pod was rejected: Node didn't have enough resource: ephemeral-storage, requested: ${6n << 30n}, used: ${6n << 30n}, capacity: ${10n << 30n}`,
    });
  });

  test("without allocatable every pod is admitted", async () => {
    const h = harness();
    const big = requesting("big", "300");
    await h.kubelet.sync(desired(big));
    await h.advance(1);
    expect(h.pod(big.key)?.phase).toBe("Running");
  });
});
