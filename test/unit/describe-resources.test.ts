/**
 * `describe pod` prints each container's Limits and Requests (kubectl's describeContainerResources:
 * after Restart Count, names sorted, quantities as served) and the pod's QoS Class.
 */
import { expect, test } from "bun:test";
import { describePodText } from "../../src/cli/describe/describe-pod.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { newPodRecord } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

function describeManifest(resources: Record<string, unknown> | undefined): string {
  const spec = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: { containers: [{ name: "web", image: "busybox:1", command: ["sleep", "9"], ...(resources && { resources }) }] },
    },
    { file: "web.yaml", source: "/m/web.yaml", node: "" },
  );
  const pod = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" });
  return describePodText({ pod, spec, events: [], attempts: [], now: 0, utcOffsetMinutes: 0 });
}

test("Limits and Requests blocks follow Restart Count, and the QoS Class is the pod's", () => {
  const text = describeManifest({ limits: { memory: "128Mi", cpu: "0.5" }, requests: { cpu: "250m" } });
  const lines = text.split("\n");
  const from = lines.indexOf("    Limits:");
  // Tab-aligned as kubectl's tabwriter aligns them: a line without a cell ends a block.
  expect(lines.slice(from - 1, from + 8)).toEqual([
    "    Restart Count:  0",
    "    Limits:",
    "      cpu:     500m",
    "      memory:  128Mi",
    "    Requests:",
    "      cpu:        250m",
    "      memory:     128Mi",
    "    Environment:  <none>",
    "    Mounts:       <none>",
  ]);
  expect(text).toMatch(/\nQoS Class: +Burstable\n/);
});

test("a container without resources has no Limits or Requests, and the pod is BestEffort", () => {
  const text = describeManifest(undefined);
  expect(text).not.toContain("Limits:");
  expect(text).not.toContain("Requests:");
  expect(text).toMatch(/\nQoS Class: +BestEffort\n/);
});

test("limits alone make requests equal to them: Guaranteed", () => {
  const text = describeManifest({ limits: { cpu: "1", memory: "64Mi" } });
  expect(text).toContain("    Requests:\n      cpu:        1\n      memory:     64Mi\n");
  expect(text).toMatch(/\nQoS Class: +Guaranteed\n/);
});
