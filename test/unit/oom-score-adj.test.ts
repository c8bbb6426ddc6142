/**
 * The kubelet's OOM score adjustment per container (pkg/kubelet/qos/policy.go), each case checked
 * against what GetContainerOOMScoreAdjust gives the same pod; the host's floor for it; and the
 * loop handing it to the runtime with each start, a resize's restart included.
 */
import { describe, expect, test } from "bun:test";
import { containerOomScoreAdj } from "../../src/kubelet/oom-score-adj.ts";
import { lowestOomScoreAdj } from "../../src/host/oom-score-floor.ts";
import type { ContainerSpec, PodSpec, ResourceRequirements } from "../../src/manifest/types.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

const Gi = 1024n ** 3n;
const POLICY = { memoryCapacityBytes: 10n * Gi, lowest: -1000 };

const sized = (name: string, requests: Record<string, string>, limits: Record<string, string> = {}, extra: Partial<ContainerSpec> = {}): ContainerSpec =>
  container(name, { resources: { requests: { ...limits, ...requests }, limits } as ResourceRequirements, ...extra });

function score(target: PodSpec, name = target.containers[0]!.name, policy = POLICY): number {
  const found = [...target.initContainers, ...target.containers].find((c) => c.name === name)!;
  return containerOomScoreAdj(target, found, policy);
}

describe("the kubelet's score", () => {
  test("Guaranteed -997, BestEffort 1000, a system-node-critical pod -997 whatever its resources", () => {
    expect(score(pod({ containers: [sized("g", {}, { cpu: "1", memory: "1Gi" })] }))).toBe(-997);
    expect(score(pod({ containers: [container("b")] }))).toBe(1000);
    const critical = pod({ containers: [container("b")] });
    critical.manifest = { ...critical.manifest, spec: { ...(critical.manifest.spec as object), priorityClassName: "system-node-critical" } };
    expect(score(critical)).toBe(-997);
  });

  test("Burstable: 1000 - 1000 * request / capacity, kept within 3..999", () => {
    expect(score(pod({ containers: [sized("a", { memory: "1Gi" })] }))).toBe(900);
    // 10% of 10 GiB less a byte is 901 in integer division, as Go's.
    expect(score(pod({ containers: [sized("a", { memory: String(Gi - 1n) })] }))).toBe(901);
    expect(score(pod({ containers: [sized("a", { cpu: "100m" })] }))).toBe(999);
    expect(score(pod({ containers: [sized("a", { memory: "10Gi" }, { memory: "20Gi" })] }))).toBe(3);
    // What the upstream resize spec expects for 40Mi on its node (25,276,194,816 bytes): 999.
    expect(score(pod({ containers: [sized("a", { memory: "40Mi" }, { memory: "80Mi" })] }), "a", { memoryCapacityBytes: 25_276_194_816n, lowest: -1000 })).toBe(999);
  });

  test("a sidecar scores no higher than the app container with the least memory", () => {
    const target = pod({
      init: [sized("side", { memory: "100Mi" }, {}, { restartPolicy: "Always" })],
      containers: [sized("small", { memory: "1Gi" }), sized("big", { memory: "2Gi" })],
    });
    expect(score(target, "side")).toBe(900);
    expect(score(target, "big")).toBe(800);
  });

  test("a pod-level memory request no container took is shared among them all", () => {
    const target = pod({ containers: [sized("a", { memory: "1Gi" }), sized("b", { cpu: "100m" })] });
    target.resources = { requests: { memory: "3Gi" }, limits: {} };
    // (3Gi - 1Gi) / 2 containers = 1Gi more each.
    expect(score(target, "a")).toBe(800);
    expect(score(target, "b")).toBe(900);
  });

  test("a host that cannot lower a score gets none below 0", () => {
    expect(score(pod({ containers: [sized("g", {}, { cpu: "1", memory: "1Gi" })] }), "g", { ...POLICY, lowest: 0 })).toBe(0);
    expect(score(pod({ containers: [sized("a", { memory: "1Gi" })] }), "a", { ...POLICY, lowest: 0 })).toBe(900);
  });
});

test("the host's floor: -1000 with CAP_SYS_RESOURCE effective, else 0", () => {
  expect(lowestOomScoreAdj("Name:\tx\nCapEff:\t000001ffffffffff\n")).toBe(-1000);
  expect(lowestOomScoreAdj("Name:\tx\nCapEff:\t000001fffeffffff\n")).toBe(0);
  expect(lowestOomScoreAdj("")).toBe(0);
});

test("each start carries the score, and a restart for a resize the new one", async () => {
  const h = harness({ oomScores: POLICY });
  const base = pod({ name: "web", containers: [sized("web", { memory: "1Gi" }, { memory: "2Gi" }, { resizePolicy: [{ resourceName: "memory", restartPolicy: "RestartContainer" }] })] });
  await h.kubelet.sync(desired(base));
  await h.advance(1);
  const scores = () => [...h.runtime.containers.values()].map((c) => c.config.oomScoreAdj);
  expect(scores()).toEqual([900]);
  const resized: PodSpec = {
    ...base,
    containers: base.containers.map((c) => ({ ...c, resources: { requests: { memory: "2Gi" }, limits: { memory: "4Gi" } } })),
    manifest: { ...base.manifest, metadata: { ...(base.manifest.metadata as object), generation: 2 } },
    configHash: `${base.configHash}-g2`,
  };
  await h.kubelet.sync(desired(resized));
  await h.advance(10);
  expect(scores()).toEqual([900, 800]);
});
