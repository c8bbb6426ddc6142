/**
 * The downward API's validation in the API server's words and paths (validateEnvVarValueFrom,
 * validateObjectFieldSelector, validateContainerResourceFieldSelector, validateDownwardAPIVolumeSource),
 * from a file and over the API (a 422 with one cause per field). ConfigMap and Secret references stay
 * refused: a static pod can reference no other API object.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createPod } from "../../src/api/resources/pods/pods-create.ts";
import { podUpdateRoutes } from "../../src/api/resources/pods/pods-update.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import { applyPodDefaults } from "../../src/manifest/defaults.ts";
import { formatIssue, ManifestError } from "../../src/manifest/errors.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { apiHarness, podCreateRequest } from "../api-watch-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

type Json = Record<string, any>;

function manifest(env: unknown[], volumes: unknown[] = []): Json {
  // The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { automountServiceAccountToken: false, volumes, containers: [{ name: "app", image: "busybox", command: ["sleep", "60"], env }] } };
}

function issuesOf(raw: unknown): string[] {
  try {
    validatePod(raw, { file: "web.yaml", source: "/manifests/web.yaml", node: "" });
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return error.issues.map(formatIssue);
  }
}

const env = (valueFrom: unknown, value?: string) => [{ name: "V", ...(value !== undefined && { value }), valueFrom }];
const volume = (downwardAPI: unknown) => [{ name: "info", downwardAPI }];
const ENV = "spec.containers[0].env[0].valueFrom";
const VOL = "spec.volumes[0].downwardAPI";
const ENV_PATHS = '"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"';
const RESOURCES = '"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"';

const cases: [name: string, raw: Json, want: string[]][] = [
  ["every supported env fieldPath is admitted", manifest(["metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs", "metadata.labels['app']", "metadata.annotations['example.com/Owner']", "spec.host"].map((fieldPath, i) => ({ name: `V${i}`, valueFrom: { fieldRef: { fieldPath } } }))), []],
  ["a field the API converts but env does not offer", manifest(env({ fieldRef: { fieldPath: "status.phase" } })), [`${ENV}.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: ${ENV_PATHS}`]],
  ["whole labels are a volume's, not env's", manifest(env({ fieldRef: { fieldPath: "metadata.labels" } })), [`${ENV}.fieldRef.fieldPath: Unsupported value: "metadata.labels": supported values: ${ENV_PATHS}`]],
  ["a field the API does not know", manifest(env({ fieldRef: { fieldPath: "spec.containers" } })), [`${ENV}.fieldRef.fieldPath: "spec.containers": error converting fieldPath: field label not supported: spec.containers`]],
  ["a subscript on a field without one", manifest(env({ fieldRef: { fieldPath: "metadata.name['x']" } })), [`${ENV}.fieldRef.fieldPath: "metadata.name['x']": error converting fieldPath: field label does not support subscript: metadata.name['x']`]],
  ["a label key that is no qualified name", manifest(env({ fieldRef: { fieldPath: "metadata.labels['a b']" } })), [`${ENV}.fieldRef: "a b": key "a b" must be 63 characters or less of letters, digits, '-', '_' and '.', starting and ending with a letter or digit`]],
  ["another apiVersion", manifest(env({ fieldRef: { apiVersion: "v2", fieldPath: "metadata.name" } })), [`${ENV}.fieldRef.fieldPath: "metadata.name": error converting fieldPath: unsupported pod version: v2`]],
  ["no fieldPath", manifest(env({ fieldRef: {} })), [`${ENV}.fieldRef.fieldPath: required`]],
  ["no source", manifest(env({})), [`${ENV}: "": must specify one of: \`fieldRef\`, \`resourceFieldRef\`, \`configMapKeyRef\` or \`secretKeyRef\``]],
  ["a value beside valueFrom", manifest(env({ fieldRef: { fieldPath: "metadata.name" } }, "x")), [`${ENV}: "": may not be specified when \`value\` is not empty`]],
  ["two sources", manifest(env({ fieldRef: { fieldPath: "metadata.name" }, resourceFieldRef: { resource: "limits.cpu" } })), [`${ENV}: "": may not have more than one field specified at a time`]],
  ["a configMapKeyRef", manifest(env({ configMapKeyRef: { name: "c", key: "k" } })), [`${ENV}.configMapKeyRef: Forbidden: static pods cannot reference ConfigMaps or Secrets: use value, fieldRef or resourceFieldRef, or create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets`]],
  ["a secretKeyRef", manifest(env({ secretKeyRef: { name: "s", key: "k" } })), [`${ENV}.secretKeyRef: Forbidden: static pods cannot reference ConfigMaps or Secrets: use value, fieldRef or resourceFieldRef, or create the pod through the agent's API (kubectl apply -f FILE) to use ConfigMaps and Secrets`]],
  ["every resource with its divisors is admitted", manifest([["limits.cpu", "1m"], ["requests.cpu", "1"], ["limits.memory", "1Mi"], ["requests.memory", "1000"], ["limits.ephemeral-storage", "1Gi"], ["requests.ephemeral-storage", "1k"], ["limits.cpu", "1000m"], ["limits.hugepages-2Mi", "1Mi"]].map(([resource, divisor], i) => ({ name: `R${i}`, valueFrom: { resourceFieldRef: { resource, divisor } } }))), []],
  ["an unknown resource", manifest(env({ resourceFieldRef: { resource: "limits.nvidia.com/gpu" } })), [`${ENV}.resourceFieldRef.resource: Unsupported value: "limits.nvidia.com/gpu": supported values: ${RESOURCES}`]],
  ["no resource", manifest(env({ resourceFieldRef: { containerName: "app" } })), [`${ENV}.resourceFieldRef.resource: required`]],
  ["a cpu divisor other than 1m and 1", manifest(env({ resourceFieldRef: { resource: "limits.cpu", divisor: "10m" } })), [`${ENV}.resourceFieldRef.divisor: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`]],
  ["a memory divisor that is no power", manifest(env({ resourceFieldRef: { resource: "requests.memory", divisor: "3Mi" } })), [`${ENV}.resourceFieldRef.divisor: "requests.memory": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource`]],
  ["an ephemeral-storage divisor", manifest(env({ resourceFieldRef: { resource: "limits.ephemeral-storage", divisor: "2" } })), [`${ENV}.resourceFieldRef.divisor: "limits.ephemeral-storage": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource`]],
  ["a downwardAPI volume is admitted", manifest([], volume({ items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }, { path: "a/b/cpu", resourceFieldRef: { containerName: "app", resource: "limits.cpu" }, mode: 0o400 }] })), []],
  ["a volume item's fieldPath env offers but volumes do not", manifest([], volume({ items: [{ path: "ip", fieldRef: { fieldPath: "status.podIP" } }] })), [`${VOL}.fieldRef.fieldPath: Unsupported value: "status.podIP": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"`]],
  ["an absolute item path", manifest([], volume({ items: [{ path: "/etc/x", fieldRef: { fieldPath: "metadata.name" } }] })), [`${VOL}.path: "/etc/x": must be a relative path`]],
  ["an item path with ..", manifest([], volume({ items: [{ path: "a/../../x", fieldRef: { fieldPath: "metadata.name" } }] })), [`${VOL}.path: "a/../../x": must not contain '..'`]],
  ["an item path starting with ..", manifest([], volume({ items: [{ path: "..data", fieldRef: { fieldPath: "metadata.name" } }] })), [`${VOL}.path: "..data": must not start with '..'`]],
  ["an item without a path", manifest([], volume({ items: [{ fieldRef: { fieldPath: "metadata.name" } }] })), [`${VOL}.path: required`]],
  ["an item with neither reference", manifest([], volume({ items: [{ path: "x" }] })), [`${VOL}: required: one of fieldRef and resourceFieldRef is required`]],
  ["an item with both references", manifest([], volume({ items: [{ path: "x", fieldRef: { fieldPath: "metadata.name" }, resourceFieldRef: { containerName: "app", resource: "limits.cpu" } }] })), [`${VOL}: "resource": fieldRef and resourceFieldRef can not be specified simultaneously`]],
  ["a volume's resourceFieldRef needs its containerName", manifest([], volume({ items: [{ path: "x", resourceFieldRef: { resource: "limits.cpu" } }] })), [`${VOL}.resourceFieldRef.containerName: required`]],
  ["a mode past 0777", manifest([], volume({ defaultMode: 0o1000, items: [{ path: "x", fieldRef: { fieldPath: "metadata.name" }, mode: -1 }] })), [`${VOL}.defaultMode: 512: must be a number between 0 and 0777 (octal), both inclusive`, `${VOL}.mode: -1: must be a number between 0 and 0777 (octal), both inclusive`]],
];

describe("downward API validation from a file", () => {
  for (const [name, raw, want] of cases) test(name, () => expect(issuesOf(raw)).toEqual(want));

  test("what is admitted is kept as written: the API server's v1 apiVersion and defaultMode 0644, the divisor in its canonical form", () => {
    const pod = validatePod(
      manifest([{ name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1024Ki" } } }, { name: "NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }], volume({ items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] })),
      { file: "web.yaml", source: "/manifests/web.yaml", node: "" },
    );
    expect(pod.containers[0]!.env).toEqual([
      { name: "MEM", value: "", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
      { name: "NAME", value: "", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    ]);
    expect(pod.volumes).toEqual([{ name: "info", type: "downwardAPI", defaultMode: 0o644, items: [{ path: "n", fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } }] }]);
  });
});

test("served as the API server stores it: divisor \"0\" when none was written, a written one canonical", () => {
  const served = applyPodDefaults(
    manifest([{ name: "A", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } }, { name: "B", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1024Ki" } } }], volume({ items: [{ path: "c", resourceFieldRef: { containerName: "app", resource: "requests.cpu" } }] })),
  ) as Json;
  expect(served.spec.containers[0].env.map((e: Json) => e.valueFrom.resourceFieldRef.divisor)).toEqual(["0", "1Mi"]);
  expect(served.spec.volumes[0].downwardAPI).toEqual({ items: [{ path: "c", resourceFieldRef: { containerName: "app", resource: "requests.cpu", divisor: "0" } }], defaultMode: 420 });
  expect(applyPodDefaults(served)).toEqual(served);
  expect(issuesOf(served)).toEqual([]);
});

describe("downward API validation over the API", () => {
  // B's Secret reference is no cause: a pod the agent's API admits may reference Secrets.
  test("a refused pod is a 422 whose causes name each field with the API server's reason", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
    const api = { ...h.api, podWrites: sources.writes };
    const bad = manifest(
      [
        { name: "A", valueFrom: { fieldRef: { fieldPath: "status.phase" } } },
        { name: "B", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
        { name: "C", valueFrom: { resourceFieldRef: { resource: "limits.cpu", divisor: "2" } } },
      ],
      volume({ items: [{ path: "../x", fieldRef: { fieldPath: "metadata.name" } }, { path: "y" }] }),
    );
    let refusal: ApiError | undefined;
    try {
      await createPod(podCreateRequest(bad), api);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      refusal = error;
    }
    expect(refusal?.code).toBe(422);
    expect(refusal!.details!.causes).toEqual([
      { reason: "FieldValueInvalid", message: `Invalid value: "../x": must not contain '..'`, field: `${VOL}.path` },
      { reason: "FieldValueRequired", message: "Required value: one of fieldRef and resourceFieldRef is required", field: VOL },
      { reason: "FieldValueNotSupported", message: `Unsupported value: "status.phase": supported values: ${ENV_PATHS}`, field: `${ENV}.fieldRef.fieldPath` },
      { reason: "FieldValueInvalid", message: `Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`, field: "spec.containers[0].env[2].valueFrom.resourceFieldRef.divisor" },
    ]);
    h.close();
  });
});

describe("a label change over the API reaches the volume", () => {
  test("PATCH metadata.labels: the pod's next pass rewrites its downwardAPI file, the container runs on", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    h.runtime.volumeRoot = join(dir.path, "volumes");
    const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
    const api = { ...h.api, podWrites: sources.writes };
    const pod = { ...manifest([], volume({ items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] })), metadata: { name: "web", labels: { app: "web" } } };
    await createPod(podCreateRequest(pod), api);
    await h.kubelet.sync(sources.desired(new Map()));
    const [spec] = [...sources.desired(new Map()).values()];
    const file = join(dir.path, "volumes", spec!.uid, "info", "labels");
    expect(readFileSync(file, "utf8")).toBe('app="web"');

    const patch = podUpdateRoutes.find((route) => route.method === "PATCH")!;
    const url = new URL("/api/v1/namespaces/default/pods/web", "http://127.0.0.1");
    const patched = await patch.handle(
      {
        method: "PATCH",
        url,
        headers: new Headers({ "content-type": "application/strategic-merge-patch+json" }),
        params: { namespace: "default", name: "web" },
        query: url.searchParams,
        signal: new AbortController().signal,
        body: async () => new TextEncoder().encode(JSON.stringify({ metadata: { labels: { track: "canary" } } })),
        upgrade: () => undefined,
      },
      api,
    );
    expect(patched.status).toBe(200);
    await h.kubelet.sync(sources.desired(new Map()));
    expect(readFileSync(file, "utf8")).toBe('app="web"\ntrack="canary"');
    expect(h.runtime.calls.filter((call) => call.startsWith("start")).length).toBe(1);
    h.close();
  });
});
