/**
 * resources.requests / resources.limits as the API server validates and defaults them
 * (ValidateContainerResourceRequirements after SetDefaults_Pod), on app containers, init
 * containers and sidecars, with the API server's field paths and words.
 */
import { describe, expect, test } from "bun:test";
import { formatIssue, ManifestError } from "../../src/manifest/errors.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import type { ContainerResizePolicy, PodSpec } from "../../src/manifest/types.ts";
import { newPodRecord } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

type Json = Record<string, any>;
const context = { file: "web.yaml", source: "/m/web.yaml", node: "" };

function pod(resources: Json | undefined, where: "containers" | "initContainers" | "sidecar" = "containers"): Json {
  const container: Json = { name: "c", image: "busybox:1", command: ["sleep", "1"], ...(resources && { resources }) };
  const spec: Json = { containers: [{ name: "app", image: "busybox:1", command: ["sleep", "1"] }] };
  if (where === "containers") spec.containers = [container];
  else spec.initContainers = [where === "sidecar" ? { ...container, restartPolicy: "Always" } : container];
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec };
}

function issuesOf(raw: Json): string[] {
  try {
    validatePod(raw, context);
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.issues.map(formatIssue);
  }
}

const admitted = (raw: Json): PodSpec => validatePod(raw, context);

describe("validation", () => {
  const cases: [name: string, resources: Json, issues: string[]][] = [
    ["cpu, memory and ephemeral-storage within their limits", { limits: { cpu: "1", memory: "128Mi", "ephemeral-storage": "1Gi" }, requests: { cpu: "500m", memory: "64Mi" } }, []],
    ["a request above its limit", { limits: { cpu: "500m" }, requests: { cpu: "600m" } }, ['spec.containers[0].resources.requests: "600m": must be less than or equal to cpu limit of 500m']],
    ["limits compare exactly across suffixes", { limits: { memory: "1G" }, requests: { memory: "1Gi" } }, ['spec.containers[0].resources.requests: "1Gi": must be less than or equal to memory limit of 1G']],
    ["equal across spellings is fine", { limits: { cpu: "0.5" }, requests: { cpu: "500m" } }, []],
    ["a negative limit", { limits: { memory: "-1" } }, [
      'spec.containers[0].resources.limits[memory]: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[memory]: "-1": must be greater than or equal to 0',
    ]],
    ["a negative request", { requests: { cpu: "-100m" } }, ['spec.containers[0].resources.requests[cpu]: "-100m": must be greater than or equal to 0']],
    ["zero is allowed", { requests: { cpu: "0" } }, []],
    ["an unknown name", { requests: { gpu: "1" } }, ['spec.containers[0].resources.requests[gpu]: "gpu": must be a standard resource for containers']],
    ["a quota name is not a container resource", { limits: { pods: "1" }, requests: { pods: "1" } }, [
      'spec.containers[0].resources.limits[pods]: "pods": must be a standard resource for containers',
      'spec.containers[0].resources.requests[pods]: "pods": must be a standard resource for containers',
    ]],
    ["a malformed quantity", { limits: { cpu: "half" } }, ["spec.containers[0].resources.limits[cpu]: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"]],
    ["an unknown suffix", { requests: { memory: "1mi" } }, ["spec.containers[0].resources.requests[memory]: unable to parse quantity's suffix"]],
    ["an extended resource needs a whole number equal to its limit", { limits: { "example.com/gpu": "1" }, requests: { "example.com/gpu": "500m", cpu: "1" } }, [
      'spec.containers[0].resources.requests[example.com/gpu]: "500m": must be an integer',
      'spec.containers[0].resources.requests: "500m": must be equal to example.com/gpu limit of 1',
    ]],
    ["an extended request without a limit", { requests: { "example.com/gpu": "1" } }, ["spec.containers[0].resources.limits: required: Limit must be set for non overcommitable resources"]],
    ["hugepages need cpu or memory", { limits: { "hugepages-2Mi": "2Mi" } }, ["spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]],
    ["hugepages beside memory", { limits: { "hugepages-2Mi": "4Mi", memory: "64Mi" } }, []],
    ["hugepages in whole pages only", { limits: { "hugepages-2Mi": "3Mi", memory: "64Mi" } }, [
      'spec.containers[0].resources.limits[hugepages-2Mi]: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
      'spec.containers[0].resources.requests[hugepages-2Mi]: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
    ]],
  ];
  test.each(cases)("%s", (_name, resources, expected) => {
    expect(issuesOf(pod(resources))).toEqual(expected);
  });

  test("init containers and sidecars are validated with their own paths", () => {
    const bad = { limits: { cpu: "100m" }, requests: { cpu: "200m" } };
    expect(issuesOf(pod(bad, "initContainers"))).toEqual(['spec.initContainers[0].resources.requests: "200m": must be less than or equal to cpu limit of 100m']);
    expect(issuesOf(pod(bad, "sidecar"))).toEqual(['spec.initContainers[0].resources.requests: "200m": must be less than or equal to cpu limit of 100m']);
  });

  test("a YAML number is a quantity (cpu: 1, cpu: 0.5)", () => {
    expect(admitted(pod({ limits: { cpu: 1 }, requests: { cpu: 0.5 } })).containers[0]!.resources).toEqual({ limits: { cpu: "1" }, requests: { cpu: "500m" } });
  });
});

describe("defaulting and the served object", () => {
  test("requests default to limits, per resource, and values are served in canonical form", () => {
    const spec = admitted(pod({ limits: { cpu: "0.5", memory: "1024Mi" }, requests: { cpu: "100m" } }));
    expect(spec.containers[0]!.resources).toEqual({ limits: { cpu: "500m", memory: "1Gi" }, requests: { cpu: "100m", memory: "1Gi" } });
    const served = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" }).spec.containers[0] as Json;
    expect(served.resources).toEqual({ limits: { cpu: "500m", memory: "1Gi" }, requests: { cpu: "100m", memory: "1Gi" } });
  });

  test("init containers and sidecars are defaulted too", () => {
    for (const where of ["initContainers", "sidecar"] as const) {
      const spec = admitted(pod({ limits: { memory: "64Mi" } }, where));
      expect(spec.initContainers[0]!.resources).toEqual({ limits: { memory: "64Mi" }, requests: { memory: "64Mi" } });
      const served = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" }).spec.initContainers![0] as Json;
      expect(served.resources).toEqual({ limits: { memory: "64Mi" }, requests: { memory: "64Mi" } });
    }
  });

  test("a container without resources is served resources: {}, as the API server serves it", () => {
    const spec = admitted(pod(undefined));
    expect(spec.containers[0]!.resources).toBeUndefined();
    const served = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" }).spec.containers[0] as Json;
    expect(served.resources).toEqual({});
  });
});

describe("resizePolicy", () => {
  const withPolicy = (resizePolicy: unknown): Json => {
    const raw = pod({ limits: { cpu: "1", memory: "128Mi" } });
    raw.spec.containers[0].resizePolicy = resizePolicy;
    return raw;
  };

  test("is read per resource: the restart a resize of each needs", () => {
    const policy: ContainerResizePolicy[] = [{ resourceName: "memory", restartPolicy: "RestartContainer" }, { resourceName: "cpu", restartPolicy: "NotRequired" }];
    expect(admitted(withPolicy(policy)).containers[0]!.resizePolicy).toEqual(policy);
    expect(admitted(pod(undefined)).containers[0]!.resizePolicy).toBeUndefined();
  });

  test("a resource other than cpu and memory, a policy not known, a resource named twice and a missing field are refused", () => {
    expect(issuesOf(withPolicy([{ resourceName: "ephemeral-storage", restartPolicy: "NotRequired" }]))).toEqual([
      'spec.containers[0].resizePolicy[0].resourceName: must be one of cpu, memory (found "ephemeral-storage")',
    ]);
    expect(issuesOf(withPolicy([{ resourceName: "cpu", restartPolicy: "Sometimes" }]))).toEqual([
      'spec.containers[0].resizePolicy[0].restartPolicy: must be one of NotRequired, RestartContainer (found "Sometimes")',
    ]);
    expect(issuesOf(withPolicy([{ resourceName: "cpu", restartPolicy: "NotRequired" }, { resourceName: "cpu", restartPolicy: "RestartContainer" }]))).toEqual([
      'spec.containers[0].resizePolicy[1].resourceName: Duplicate value: "cpu"',
    ]);
    expect(issuesOf(withPolicy([{ resourceName: "cpu" }]))).toEqual(["spec.containers[0].resizePolicy[0].restartPolicy: Required value"]);
  });
});
