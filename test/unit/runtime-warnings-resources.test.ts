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
