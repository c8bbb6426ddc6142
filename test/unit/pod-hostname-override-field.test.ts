/**
 * spec.hostnameOverride (GA in Kubernetes 1.37) is a field of the v1 Pod: a pod that sets it is not
 * warned about an unknown field, and the field reaches the runtime in the pod's manifest.
 */
import { expect, test } from "bun:test";
import { admitPod } from "../../src/manifest/admit.ts";

test("spec.hostnameOverride is kept and not an unknown field", () => {
  const raw = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "demo" },
    spec: { hostnameOverride: "override.example.host", containers: [{ name: "main", image: "busybox" }] },
  };
  const { pod, warnings } = admitPod(raw, { file: "web.json", source: "/m/web.json", node: "n1" });
  expect(warnings.map((w) => w.path.join("."))).not.toContain("spec.hostnameOverride");
  expect((pod.manifest.spec as Record<string, unknown>).hostnameOverride).toBe("override.example.host");
});
