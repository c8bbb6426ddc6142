import { describe, expect, test } from "bun:test";
import { admissionRefusal, podRequests, type PodRequests } from "../../src/kubelet/admission/admission.ts";
import { nodeAllocatable, NOTHING_RESERVED, parseReserved, ReservedError } from "../../src/eviction/node-allocatable.ts";
import { parseEvictionHard } from "../../src/eviction/thresholds.ts";
import { container } from "../pod-builder.ts";

const Mi = 1024n * 1024n;

function needs(cpu: string, memory?: string, storage?: string) {
  return { resources: { limits: {}, requests: { cpu, ...(memory && { memory }), ...(storage && { "ephemeral-storage": storage }) } } };
}

function sidecar(name: string, cpu: string) {
  return container(name, { ...needs(cpu), restartPolicy: "Always" });
}

describe("podRequests", () => {
  test("sums app containers, in millicores and bytes", () => {
    const requests = podRequests({ containers: [container("a", needs("500m", "64Mi", "1Gi")), container("b", needs("1.5", "1Gi", "500M"))], initContainers: [] });
    expect(requests).toEqual({ cpuMillis: 2000n, memoryBytes: 64n * Mi + 1024n * Mi, ephemeralStorageBytes: 1024n * Mi + 500_000_000n });
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

  test("a pod-level cpu or memory request stands for the pod's, as the pod resource helper reads it; other resources stay the containers'", () => {
    const spec = { containers: [container("a", needs("500m", "64Mi", "1Gi"))], initContainers: [], resources: { limits: {}, requests: { cpu: "2", memory: "1Gi" } } };
    expect(podRequests(spec)).toEqual({ cpuMillis: 2000n, memoryBytes: 1024n * Mi, ephemeralStorageBytes: 1024n * Mi });
  });

  test("a container with no requests asks for nothing", () => {
    expect(podRequests({ containers: [container("a")], initContainers: [] })).toEqual({ cpuMillis: 0n, memoryBytes: 0n, ephemeralStorageBytes: 0n });
  });
});

describe("admissionRefusal", () => {
  const allocatable = { cpuMillis: 2000n, memoryBytes: 1024n * Mi, ephemeralStorageBytes: 10n * 1024n * Mi, pods: 3 };
  const pod = (cpuMillis: bigint, memoryBytes = 0n, ephemeralStorageBytes = 0n): PodRequests => ({ cpuMillis, memoryBytes, ephemeralStorageBytes });

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

  test("ephemeral-storage is checked in bytes, with the kubelet's OutOfephemeral-storage", () => {
    expect(admissionRefusal(pod(0n, 0n, 6n * 1024n * Mi), [pod(0n, 0n, 5n * 1024n * Mi)], allocatable)).toEqual({
      reason: "OutOfephemeral-storage",
      message: `Node didn't have enough resource: ephemeral-storage, requested: ${6n * 1024n * Mi}, used: ${5n * 1024n * Mi}, capacity: ${10n * 1024n * Mi}`,
    });
    expect(admissionRefusal(pod(0n, 0n, 5n * 1024n * Mi), [pod(0n, 0n, 5n * 1024n * Mi)], allocatable)).toBeUndefined();
  });

  test("memory is named before ephemeral-storage when both are short", () => {
    expect(admissionRefusal(pod(0n, 2048n * Mi, 20n * 1024n * Mi), [], allocatable)?.reason).toBe("OutOfmemory");
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

const Gi = 1024n * Mi;
const host = { cpus: 2, memoryTotalKi: 4 * 1024 * 1024, ephemeralStorageBytes: 100n * Gi };
const defaults = { evictionHard: parseEvictionHard(""), systemReserved: NOTHING_RESERVED, kubeReserved: NOTHING_RESERVED };

describe("nodeAllocatable", () => {
  test("by default: the host's CPUs, its memory less memory.available<100Mi, its pods filesystem less nodefs.available<10%", () => {
    expect(nodeAllocatable(host, defaults)).toEqual({ cpuMillis: 2000n, memoryBytes: 4n * Gi - 100n * Mi, ephemeralStorageBytes: 90n * Gi, pods: 110 });
  });

  test("system-reserved and kube-reserved are taken off, as the kubelet's GetNodeAllocatableReservation does", () => {
    const reservations = {
      evictionHard: parseEvictionHard("nodefs.available<2Gi"),
      systemReserved: parseReserved("--system-reserved", "cpu=500m,memory=1Gi,ephemeral-storage=10Gi"),
      kubeReserved: parseReserved("--kube-reserved", "cpu=250m,memory=512Mi"),
    };
    expect(nodeAllocatable(host, reservations)).toEqual({
      cpuMillis: 1250n,
      memoryBytes: 4n * Gi - 1n * Gi - 512n * Mi - 100n * Mi,
      ephemeralStorageBytes: 100n * Gi - 10n * Gi - 2n * Gi,
      pods: 110,
    });
  });

  test("never below zero", () => {
    const reservations = { ...defaults, systemReserved: parseReserved("--system-reserved", "cpu=8,memory=64Gi") };
    expect(nodeAllocatable(host, reservations)).toMatchObject({ cpuMillis: 0n, memoryBytes: 0n });
  });
});

describe("parseReserved", () => {
  test("reads the kubelet's NAME=QUANTITY list", () => {
    expect(parseReserved("--system-reserved", "cpu=0.5, memory=1G,ephemeral-storage=1Ki")).toEqual({ cpuMillis: 500n, memoryBytes: 1_000_000_000n, ephemeralStorageBytes: 1024n });
    expect(parseReserved("--system-reserved", "")).toEqual(NOTHING_RESERVED);
  });

  test("refuses what the kubelet refuses, naming the flag", () => {
    const refused = (text: string) => {
      try {
        parseReserved("--system-reserved", text);
      } catch (error) {
        expect(error).toBeInstanceOf(ReservedError);
        return (error as Error).message;
      }
      throw new Error(`${text} was accepted`);
    };
    expect(refused("cpu")).toBe('--system-reserved: "cpu" is not NAME=QUANTITY (e.g. cpu=500m,memory=1Gi)');
    expect(refused("gpu=1")).toBe("--system-reserved: gpu cannot be reserved (only cpu, memory, ephemeral-storage)");
    expect(refused("memory=-1Gi")).toBe("--system-reserved: memory=-1Gi: must be greater than or equal to 0");
    expect(refused("memory=lots")).toMatch(/^--system-reserved: memory=lots: quantities must match the regular expression/);
  });
});
