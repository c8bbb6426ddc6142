/** Which resources each runtime says it does not enforce. */
import { describe, expect, test } from "bun:test";
import { runtimeWarnings } from "../../src/manifest/runtime-rules.ts";

const pod = (resources: unknown) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  spec: { containers: [{ name: "app", image: "busybox", resources }] },
});

const resourceWarnings = (raw: unknown, runtime: "docker" | "process") =>
  runtimeWarnings(raw, runtime)
    .filter((issue) => issue.path.includes("resources"))
    .map((issue) => `${issue.path.join(".")}: ${issue.message}`);

describe("docker enforces cpu and memory", () => {
  test("cpu and memory limits and requests draw no warning", () => {
    expect(resourceWarnings(pod({ limits: { cpu: "1", memory: "64Mi" }, requests: { cpu: "500m", memory: "32Mi" } }), "docker")).toEqual([]);
  });

  test("what the engine is not given is still named, resource by resource", () => {
    const raw = pod({ limits: { cpu: "1", "ephemeral-storage": "1Gi", "example.com/gpu": "1" }, requests: { "ephemeral-storage": "1Gi" } });
    expect(resourceWarnings(raw, "docker")).toEqual([
      "spec.containers.0.resources.limits.ephemeral-storage: not enforced by the docker runtime",
      "spec.containers.0.resources.limits.example.com/gpu: not enforced by the docker runtime",
      "spec.containers.0.resources.requests.ephemeral-storage: not enforced by the docker runtime",
    ]);
  });
});

describe("pod-level resources (spec.resources)", () => {
  test("are named as not enforced on either runtime: only each container's own are applied", () => {
    const raw = { ...pod({ limits: { cpu: "1" } }), spec: { ...pod(undefined).spec, resources: { limits: { cpu: "2", memory: "1Gi" } } } };
    for (const runtime of ["docker", "process"] as const) {
      expect(resourceWarnings(raw, runtime).filter((line) => line.startsWith("spec.resources"))).toEqual([
        `spec.resources: not enforced by the ${runtime} runtime: pod-level requests and limits set the QoS class and count at admission, but only each container's own cpu and memory limits are applied`,
      ]);
    }
  });
});
