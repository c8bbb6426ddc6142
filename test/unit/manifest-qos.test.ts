/**
 * The QoS class by the API's rules (ComputePodQOS, read by the kubelet's GetPodQOS): cpu and memory
 * only, zero as unset, requests defaulted from limits, init containers and sidecars counted.
 */
import { describe, expect, test } from "bun:test";
import { manifestQosClass, podQosClass, type QosClass } from "../../src/manifest/qos.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { newPodRecord } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

type Resources = { limits?: Record<string, string>; requests?: Record<string, string> };
const guaranteed: Resources = { limits: { cpu: "100m", memory: "64Mi" } };
const sameAsLimits: Resources = { limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "1000m", memory: "1024Mi" } };

const cases: [name: string, init: (Resources | undefined)[], app: (Resources | undefined)[], qos: QosClass][] = [
  ["nothing set", [], [undefined], "BestEffort"],
  ["zero requests and limits count as unset", [], [{ limits: { cpu: "0", memory: "0" }, requests: { cpu: "0" } }], "BestEffort"],
  ["only resources the class ignores", [], [{ limits: { "ephemeral-storage": "1Gi", "example.com/gpu": "1" } }], "BestEffort"],
  ["cpu and memory limits, requests defaulted to them", [], [guaranteed], "Guaranteed"],
  ["requests equal to limits written differently", [], [sameAsLimits, guaranteed], "Guaranteed"],
  ["hugepages beside equal cpu and memory", [], [{ limits: { cpu: "1", memory: "1Gi", "hugepages-2Mi": "2Mi" } }], "Guaranteed"],
  ["a request below its limit", [], [{ limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "500m" } }], "Burstable"],
  ["only a cpu limit", [], [{ limits: { cpu: "1" } }], "Burstable"],
  ["only requests", [], [{ requests: { memory: "64Mi" } }], "Burstable"],
  ["one guaranteed container beside one with nothing", [], [guaranteed, undefined], "Burstable"],
  ["an init container with nothing spoils a guaranteed app", [undefined], [guaranteed], "Burstable"],
  ["a guaranteed init container and app", [guaranteed], [guaranteed], "Guaranteed"],
  ["an init container with requests makes a best-effort app burstable", [{ requests: { cpu: "10m" } }], [undefined], "Burstable"],
];

test.each(cases)("%s: %s", (_name, init, app, qos) => {
  expect(podQosClass([...init, ...app].map((resources) => ({ resources })))).toBe(qos);
});

test("status.qosClass of the served pod, a sidecar counted like any init container", () => {
  const manifest = (sidecar: Resources | undefined) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web" },
    spec: {
      initContainers: [{ name: "proxy", image: "busybox:1", command: ["sleep", "9"], restartPolicy: "Always", ...(sidecar && { resources: sidecar }) }],
      containers: [{ name: "web", image: "busybox:1", command: ["sleep", "9"], resources: guaranteed }],
    },
  });
  const served = (sidecar: Resources | undefined) =>
    servedPod(newPodRecord(validatePod(manifest(sidecar), { file: "web.yaml", source: "/m/web.yaml", node: "" }), 0), { runtimeName: "fake" }).status!.qosClass;
  expect(served(undefined)).toBe("Burstable");
  expect(served(guaranteed)).toBe("Guaranteed");
  // A pod the API accepted and the loop has not run yet is classed from its manifest.
  expect(manifestQosClass(manifest(guaranteed))).toBe("Guaranteed");
  expect(manifestQosClass(manifest(undefined))).toBe("Burstable");
  expect(manifestQosClass({ spec: { containers: [{ name: "web" }] } })).toBe("BestEffort");
});

describe("a pod with pod-level resources is classed by them (as the v1.37.2 API server's dry run classes these three)", () => {
  const context = { file: "web.yaml", source: "/etc/minikubelet/web.yaml", node: "" };
  const classOf = (podLevel: Record<string, unknown>, container: Record<string, unknown> = {}) => {
    const pod = validatePod({ apiVersion: "v1", kind: "Pod", metadata: { name: "q" }, spec: { resources: podLevel, containers: [{ name: "a", image: "busybox", resources: container }] } }, context);
    return podQosClass([...pod.initContainers, ...pod.containers], pod.resources);
  };

  test("cpu and memory limits at pod level, none in the container: Guaranteed", () => {
    expect(classOf({ limits: { cpu: "1", memory: "1Gi" } })).toBe("Guaranteed");
  });

  test("a pod-level request alone: Burstable", () => {
    expect(classOf({ requests: { cpu: "1" } })).toBe("Burstable");
  });

  test("the pod's cpu request defaults to what its container requests, below the limit: Burstable", () => {
    expect(classOf({ limits: { cpu: "1", memory: "1Gi" } }, { requests: { cpu: "100m" } })).toBe("Burstable");
  });
});
