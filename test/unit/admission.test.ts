import { describe, expect, test } from "bun:test";
import { admissionRefusal, podRequests, type PodRequests } from "../../src/kubelet/admission.ts";
import { nodeAllocatable } from "../../src/node-allocatable.ts";
import { container } from "../pod-builder.ts";

const Mi = 1024n * 1024n;

function needs(cpu: string, memory?: string) {
  return { resources: { limits: {}, requests: { cpu, ...(memory && { memory }) } } };
}

function sidecar(name: string, cpu: string) {
  return container(name, { ...needs(cpu), restartPolicy: "Always" });
}

describe("podRequests", () => {
  test("sums app containers, in millicores and bytes", () => {
    const requests = podRequests({ containers: [container("a", needs("500m", "64Mi")), container("b", needs("1.5", "1Gi"))], initContainers: [] });
    expect(requests).toEqual({ cpuMillis: 2000n, memoryBytes: 64n * Mi + 1024n * Mi });
  });

  test("an init container larger than the app containers sets the pod's request", () => {
    const requests = podRequests({ containers: [container("app", needs("500m"))], initContainers: [container("migrate", needs("2"))] });
    expect(requests.cpuMillis).toBe(2000n);
  });

  test("sidecars count beside the app containers and beside the init containers declared after them", () => {
    const spec = {
      initContainers: [container("early", needs("1")), sidecar("proxy", "300m"), container("late", needs("1"))],
      containers: [container("app", needs("200m"))],
    };
    // early alone 1000m; late beside proxy 1300m; app with proxy 500m: the pod needs 1300m.
    expect(podRequests(spec).cpuMillis).toBe(1300n);
  });

  test("a container with no requests asks for nothing", () => {
    expect(podRequests({ containers: [container("a")], initContainers: [] })).toEqual({ cpuMillis: 0n, memoryBytes: 0n });
  });
});

describe("admissionRefusal", () => {
  const allocatable = { cpuMillis: 2000n, memoryBytes: 1024n * Mi, pods: 3 };
  const pod = (cpuMillis: bigint, memoryBytes = 0n): PodRequests => ({ cpuMillis, memoryBytes });

  test("a pod that fits beside the admitted ones is admitted", () => {
    expect(admissionRefusal(pod(1500n), [pod(500n)], allocatable)).toBeUndefined();
  });

  test("cpu beyond what is left is refused with the kubelet's reason and message", () => {
    expect(admissionRefusal(pod(3000n), [pod(500n)], allocatable)).toEqual({
      reason: "OutOfcpu",
      message: "Node didn't have enough resource: cpu, requested: 3000, used: 500, capacity: 2000",
    });
  });

  test("the requests of several admitted pods add up", () => {
    expect(admissionRefusal(pod(600n), [pod(700n), pod(800n)], allocatable)?.message).toBe(
      "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000",
    );
  });

  test("memory is checked in bytes", () => {
    expect(admissionRefusal(pod(0n, 1025n * Mi), [], allocatable)).toEqual({
      reason: "OutOfmemory",
      message: `Node didn't have enough resource: memory, requested: ${1025n * Mi}, used: 0, capacity: ${1024n * Mi}`,
    });
  });

  test("cpu is named before memory when both are short, as the scheduler orders them", () => {
    expect(admissionRefusal(pod(5000n, 2048n * Mi), [], allocatable)?.reason).toBe("OutOfcpu");
  });

  test("the pod count limit refuses even a pod that asks for nothing", () => {
    expect(admissionRefusal(pod(0n), [pod(0n), pod(0n), pod(0n)], allocatable)).toEqual({
      reason: "OutOfpods",
      message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    });
  });

  test("a pod with no requests fits a full node", () => {
    expect(admissionRefusal(pod(0n), [pod(2000n, 1024n * Mi)], allocatable)).toBeUndefined();
  });
});

test("allocatable is the host's CPUs and its memory less the 100Mi hard eviction threshold", () => {
  expect(nodeAllocatable({ cpus: 2, memoryTotalKi: 4 * 1024 * 1024 })).toEqual({ cpuMillis: 2000n, memoryBytes: (4n * 1024n - 100n) * Mi, pods: 110 });
});
