/**
 * The downward API's values as the kubelet computes them: every env fieldPath, every
 * resourceFieldRef resource with its divisor rounded up, the node's allocatable for a limit a
 * container does not set, and a downwardAPI volume's files (labels and annotations as
 * `key="value"` lines).
 */
import { describe, expect, test } from "bun:test";
import { DownwardApiError, formatMap, resolveEnv, resourceFieldValue, volumeFiles } from "../../src/kubelet/env/downward-values.ts";
import type { NodeAllocatable } from "../../src/eviction/node-allocatable.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";

const allocatable: NodeAllocatable = { cpuMillis: 3500n, memoryBytes: 8n * 1024n ** 3n, ephemeralStorageBytes: 50n * 10n ** 9n, pods: 110 };
const createdAt = Date.UTC(2026, 0, 2, 3, 4, 5);

function pod(env: unknown[], extra: { volumes?: unknown[]; resources?: unknown; serviceAccountName?: string } = {}): PodSpec {
  return validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo", labels: { app: "web", tier: "front" }, annotations: { "example.com/owner": "ops \"team\"" } },
      spec: {
        ...(extra.serviceAccountName && { serviceAccountName: extra.serviceAccountName }),
        volumes: extra.volumes ?? [],
        containers: [
          { name: "app", image: "busybox", env, ...(extra.resources !== undefined && { resources: extra.resources }) },
          { name: "side", image: "busybox", resources: { limits: { cpu: "1500m", memory: "100Mi" } } },
        ],
      },
    },
    { file: "web.yaml", source: "/manifests/web.yaml", node: "lab" },
  );
}

const fieldRef = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
const resourceRef = (name: string, resource: string, extra: Record<string, unknown> = {}) => ({ name, valueFrom: { resourceFieldRef: { resource, ...extra } } });

describe("env fieldRef", () => {
  const spec = pod(
    [
      { name: "PLAIN", value: "as written" },
      fieldRef("NAME", "metadata.name"),
      fieldRef("NAMESPACE", "metadata.namespace"),
      fieldRef("UID", "metadata.uid"),
      fieldRef("APP", "metadata.labels['app']"),
      fieldRef("MISSING", "metadata.labels['nope']"),
      fieldRef("OWNER", "metadata.annotations['example.com/owner']"),
      fieldRef("SOURCE", "metadata.annotations['kubernetes.io/config.source']"),
      fieldRef("NODE", "spec.nodeName"),
      fieldRef("SA", "spec.serviceAccountName"),
      fieldRef("POD_IP", "status.podIP"),
      fieldRef("POD_IPS", "status.podIPs"),
      fieldRef("HOST_IP", "status.hostIP"),
      fieldRef("HOST_IPS", "status.hostIPs"),
    ],
    { serviceAccountName: "builder" },
  );
  const env = Object.fromEntries(resolveEnv(spec, spec.containers[0]!, { podIP: "172.17.0.5", createdAt, allocatable }).map((e) => [e.name, e.value]));
  const want: Record<string, string> = {
    PLAIN: "as written",
    NAME: "web-lab",
    NAMESPACE: "demo",
    UID: spec.uid,
    APP: "web",
    MISSING: "",
    OWNER: 'ops "team"',
    SOURCE: "file",
    NODE: "lab",
    SA: "builder",
    POD_IP: "172.17.0.5",
    POD_IPS: "172.17.0.5",
    HOST_IP: "127.0.0.1",
    HOST_IPS: "127.0.0.1",
  };
  for (const [name, value] of Object.entries(want)) {
    test(`${name} is ${JSON.stringify(value)}`, () => expect(env[name]).toBe(value));
  }
  test("the variables keep their order", () => expect(Object.keys(env)).toEqual(Object.keys(want)));
});

describe("resourceFieldRef", () => {
  const resources = { limits: { cpu: "250m", memory: "64Mi", "ephemeral-storage": "1G" }, requests: { cpu: "100m", memory: "1500k" } };
  const cases: [resource: string, divisor: string | undefined, want: string][] = [
    ["limits.cpu", undefined, "1"], // 250m rounded up to a whole core
    ["limits.cpu", "1m", "250"],
    ["limits.cpu", "1", "1"],
    ["requests.cpu", "1m", "100"],
    ["requests.cpu", undefined, "1"],
    ["limits.memory", undefined, "67108864"],
    ["limits.memory", "1Mi", "64"],
    ["limits.memory", "1M", "68"], // 67.1 MB rounded up
    ["limits.memory", "1Gi", "1"],
    ["requests.memory", "1Ki", "1465"], // 1464.84 KiB rounded up
    ["requests.memory", "1k", "1500"],
    ["limits.ephemeral-storage", "1Mi", "954"], // 953.67 MiB rounded up
    ["limits.ephemeral-storage", "1G", "1"],
    ["requests.ephemeral-storage", undefined, "1000000000"], // defaulted from its limit
  ];
  for (const [resource, divisor, want] of cases) {
    test(`${resource} / ${divisor ?? "(none)"} = ${want}`, () => {
      const spec = pod([resourceRef("V", resource, divisor ? { divisor } : {})], { resources });
      expect(resolveEnv(spec, spec.containers[0]!, { createdAt, allocatable })[0]!.value).toBe(want);
    });
  }

  test("a limit the container does not set is the node's allocatable; an unset request is 0", () => {
    const spec = pod([resourceRef("CPU", "limits.cpu", { divisor: "1m" }), resourceRef("CORES", "limits.cpu"), resourceRef("MEM", "limits.memory", { divisor: "1Mi" }), resourceRef("DISK", "limits.ephemeral-storage"), resourceRef("REQ", "requests.memory")]);
    const values = resolveEnv(spec, spec.containers[0]!, { createdAt, allocatable }).map((e) => e.value);
    expect(values).toEqual(["3500", "4", "8192", "50000000000", "0"]);
  });

  test("containerName reads another container's resources; one naming no container is an error", () => {
    const spec = pod([resourceRef("SIDE", "limits.cpu", { containerName: "side", divisor: "1m" })]);
    expect(resolveEnv(spec, spec.containers[0]!, { createdAt, allocatable })[0]!.value).toBe("1500");
    expect(() => resourceFieldValue(spec, { resource: "limits.cpu", containerName: "gone" }, "app", allocatable)).toThrow(new DownwardApiError("container gone not found"));
  });
});

describe("downwardAPI volume files", () => {
  test("each item's content and mode (defaultMode 0644 unless the item sets one)", () => {
    const spec = pod([], {
      volumes: [
        {
          name: "info",
          downwardAPI: {
            items: [
              { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
              { path: "annotations", fieldRef: { fieldPath: "metadata.annotations" } },
              { path: "meta/name", fieldRef: { fieldPath: "metadata.name" }, mode: 0o600 },
              { path: "ns", fieldRef: { fieldPath: "metadata.namespace" } },
              { path: "uid", fieldRef: { fieldPath: "metadata.uid" } },
              { path: "app", fieldRef: { fieldPath: "metadata.labels['app']" } },
              { path: "cpu", resourceFieldRef: { containerName: "side", resource: "limits.cpu", divisor: "1m" } },
              { path: "mem", resourceFieldRef: { containerName: "side", resource: "limits.memory", divisor: "1Mi" } },
            ],
          },
        },
      ],
    });
    const volume = spec.volumes[0]!;
    if (volume.type !== "downwardAPI") throw new Error("not a downwardAPI volume");
    const files = volumeFiles(spec, volume, { createdAt, allocatable });
    expect(files).toEqual([
      { path: "labels", content: 'app="web"\ntier="front"', mode: 0o644 },
      {
        path: "annotations",
        content: `example.com/owner="ops \\"team\\""\nkubernetes.io/config.hash="${spec.configHash}"\nkubernetes.io/config.seen="2026-01-02T03:04:05Z"\nkubernetes.io/config.source="file"`,
        mode: 0o644,
      },
      { path: "meta/name", content: "web-lab", mode: 0o600 },
      { path: "ns", content: "demo", mode: 0o644 },
      { path: "uid", content: spec.uid, mode: 0o644 },
      { path: "app", content: "web", mode: 0o644 },
      { path: "cpu", content: "1500", mode: 0o644 },
      { path: "mem", content: "100", mode: 0o644 },
    ]);
  });

  test("formatMap sorts by key and leaves no trailing newline; an empty map is empty", () => {
    expect(formatMap({ b: "2", a: "1" })).toBe('a="1"\nb="2"');
    expect(formatMap({})).toBe("");
  });
});
