/**
 * configMap, secret and projected volumes and ConfigMap/Secret env in the loop (fake runtime, fake
 * clock, fake source of objects): the files and their modes, the `..data` swap when the object is
 * edited, a missing object holding the pod in ContainerCreating with the kubelet's FailedMount
 * event (or the container in CreateContainerConfigError) until the object arrives, which wakes it.
 */
import { describe, expect, test } from "bun:test";
import { lstatSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { volumePayload, VolumeSetUpError } from "../../src/kubelet/volumes/object-payload.ts";
import { harness } from "../kubelet-harness.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { FakePodObjects } from "../fake-pod-objects.ts";
import { emptyDirPath, resolveMounts } from "../../src/runtime/docker/docker-container-config.ts";
import { mountSource } from "../../src/runtime/process/process-spec.ts";

function clusterPod(volumes: unknown[], container: Record<string, unknown> = {}): PodSpec {
  return validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo", uid: "u-1" },
      spec: { volumes, containers: [{ name: "app", image: "busybox", command: ["sleep", "60"], volumeMounts: volumes.map((v) => ({ name: (v as { name: string }).name, mountPath: `/mnt/${(v as { name: string }).name}` })), ...container }] },
    },
    { file: "pod", source: "api", node: "", apiObjects: "allowed" },
  );
}

function files(pod: PodSpec, source: FakePodObjects): Record<string, string> | string {
  const volume = pod.volumes[0]!;
  if (volume.type === "emptyDir" || volume.type === "hostPath") throw new Error("not a filled volume");
  try {
    const payload = volumePayload(pod, volume, { facts: { createdAt: 0 }, objects: source });
    return Object.fromEntries(payload.files.map((f) => [f.path, `${(f.mode).toString(8)} ${typeof f.content === "string" ? f.content : `bytes:${Buffer.from(f.content).toString("base64")}`}`]));
  } catch (error) {
    if (error instanceof VolumeSetUpError) return `error: ${error.message}`;
    throw error;
  }
}

describe("the files of configMap, secret and projected volumes", () => {
  const source = new FakePodObjects();
  source.setConfigMap("demo", "cfg", { "app.conf": "level=1", b: "2" }, { "logo.png": new Uint8Array([137, 80]) });
  source.setSecret("demo", "db", { password: "s3cret" });
  const table: [string, unknown, Record<string, string> | string][] = [
    ["every key, binaryData too, at the default mode", { name: "v", configMap: { name: "cfg" } }, { "app.conf": "644 level=1", b: "644 2", "logo.png": "644 bytes:iVA=" }],
    ["items at their paths, the item's mode over defaultMode", { name: "v", configMap: { name: "cfg", defaultMode: 0o440, items: [{ key: "app.conf", path: "etc/app.conf", mode: 0o600 }, { key: "b", path: "b.txt" }] } }, { "etc/app.conf": "600 level=1", "b.txt": "440 2" }],
    ["a Secret's bytes", { name: "v", secret: { secretName: "db", defaultMode: 0o400 } }, { password: "400 bytes:czNjcmV0" }],
    ["a missing ConfigMap", { name: "v", configMap: { name: "nope" } }, `error: configmap "nope" not found`],
    ["an optional missing Secret is an empty volume", { name: "v", secret: { secretName: "nope", optional: true } }, {}],
    ["an item naming a key the ConfigMap lacks", { name: "v", configMap: { name: "cfg", items: [{ key: "zzz", path: "z" }] } }, "error: configmap references non-existent config key: zzz"],
    ["an item naming a key the Secret lacks", { name: "v", secret: { secretName: "db", items: [{ key: "zzz", path: "z" }] } }, "error: references non-existent secret key: zzz"],
    [
      "projected: a ConfigMap, a Secret and the downward API in one directory",
      { name: "v", projected: { defaultMode: 0o444, sources: [{ configMap: { name: "cfg", items: [{ key: "b", path: "b" }] } }, { secret: { name: "db" } }, { downwardAPI: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace" } }] } }] } },
      { b: "444 2", password: "444 bytes:czNjcmV0", ns: "444 demo" },
    ],
    ["projected: each missing source is named", { name: "v", projected: { sources: [{ configMap: { name: "a" } }, { secret: { name: "b" } }] } }, `error: [configmap "a" not found, secret "b" not found]`],
  ];
  for (const [name, volume, expected] of table) test(name, () => expect(files(clusterPod([volume]), source)).toEqual(expected));
});

describe("the loop", () => {
  test("a missing ConfigMap keeps the pod ContainerCreating with FailedMount; its arrival starts the pod; an edit swaps ..data", async () => {
    using dir = tempDir();
    const objects = new FakePodObjects();
    const h = harness({ objects });
    h.runtime.volumeRoot = dir.path;
    const web = clusterPod([{ name: "cfg", configMap: { name: "cfg", defaultMode: 0o640 } }]);
    await h.kubelet.sync(desired(web));
    expect(objects.registered.has(web.uid)).toBe(true);
    expect(h.runtime.containers.size).toBe(0);
    expect(h.pod(web.key)!.app[0]!.waiting?.reason).toBe("ContainerCreating");
    expect(h.events.map((e) => `${e.reason} ${e.message}`)).toContain(`FailedMount MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found`);

    objects.setConfigMap("demo", "cfg", { "app.conf": "level=1" });
    await h.kubelet.idle();
    expect(h.runtime.containers.size).toBe(1);
    const root = join(dir.path, web.uid, "cfg");
    expect(readFileSync(join(root, "app.conf"), "utf8")).toBe("level=1");
    expect(statSync(join(root, "app.conf")).mode & 0o777).toBe(0o640);
    expect(readlinkSync(join(root, "app.conf"))).toBe("..data/app.conf");
    const first = readlinkSync(join(root, "..data"));

    await h.advance(1);
    objects.setConfigMap("demo", "cfg", { "app.conf": "level=2", extra: "x" });
    await h.kubelet.idle();
    expect(readFileSync(join(root, "app.conf"), "utf8")).toBe("level=2");
    expect(readFileSync(join(root, "extra"), "utf8")).toBe("x");
    expect(readlinkSync(join(root, "..data"))).not.toBe(first);
    expect(() => lstatSync(join(root, first))).toThrow();
    // The container was not restarted for it: the kubelet updates the files in place.
    expect(h.runtime.containers.size).toBe(1);
  });

  test("a missing Secret key holds the container in CreateContainerConfigError until the Secret has it", async () => {
    const objects = new FakePodObjects();
    objects.setSecret("demo", "db", {});
    const h = harness({ objects });
    const web = clusterPod([], { env: [{ name: "PW", valueFrom: { secretKeyRef: { name: "db", key: "password" } } }] });
    await h.kubelet.sync(desired(web));
    const app = h.pod(web.key)!.app[0]!;
    expect(app.state).toBe("waiting");
    expect(app.waiting).toEqual({ reason: "CreateContainerConfigError", message: "couldn't find key password in Secret demo/db" });
    expect(h.events.map((e) => `${e.type} ${e.reason} ${e.message}`)).toContain("Warning Failed Error: couldn't find key password in Secret demo/db");
    expect(h.runtime.containers.size).toBe(0);

    objects.setSecret("demo", "db", { password: "s3cret" });
    await h.kubelet.idle();
    const started = [...h.runtime.containers.values()][0]!.config.container.env;
    expect(started.find((e) => e.name === "PW")?.value).toBe("s3cret");
    // A change of another object wakes nothing.
    const passes = h.events.length;
    objects.setSecret("demo", "unrelated", { a: "b" });
    await h.kubelet.idle();
    expect(h.events.length).toBe(passes);
  });

  test("an object still being listed: the pod waits quietly for a second, then says why; its arrival starts it", async () => {
    using dir = tempDir();
    const objects = new FakePodObjects();
    const h = harness({ objects });
    h.runtime.volumeRoot = dir.path;
    objects.unread.add("configMap demo/cfg");
    objects.readingUntil = h.clock.now() + 1000;
    const web = clusterPod([{ name: "cfg", configMap: { name: "cfg" } }], { env: [{ name: "A", valueFrom: { configMapKeyRef: { name: "cfg", key: "a" } } }] });
    await h.kubelet.sync(desired(web));
    expect(h.events).toEqual([]);
    await h.advance(1);
    expect(h.events.map((e) => `${e.reason} ${e.message}`)).toEqual([`FailedMount MountVolume.SetUp failed for volume "cfg" : failed to sync configmap cache: timed out waiting for the condition`]);
    objects.unread.clear();
    objects.setConfigMap("demo", "cfg", { a: "1" });
    await h.kubelet.idle();
    expect([...h.runtime.containers.values()][0]!.config.container.env.find((e) => e.name === "A")?.value).toBe("1");
  });

  test("a removed pod is unregistered from the source", async () => {
    const objects = new FakePodObjects();
    objects.setConfigMap("demo", "cfg", { a: "1" });
    const h = harness({ objects });
    const web = clusterPod([], { env: [{ name: "A", valueFrom: { configMapKeyRef: { name: "cfg", key: "a" } } }] });
    await h.kubelet.sync(desired(web));
    expect(objects.registered.has(web.uid)).toBe(true);
    await h.kubelet.sync(desired(), { sourcesReady: true });
    await h.advance(35);
    expect(h.kubelet.pods.size).toBe(0);
    expect(objects.registered.has(web.uid)).toBe(false);
  });
});

test("both runtimes mount these volumes from the directory the kubelet fills; docker read-only whatever the mount says", () => {
  const pod = clusterPod([{ name: "cfg", configMap: { name: "cfg" } }, { name: "db", secret: { secretName: "db" } }, { name: "sa", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } }]);
  const app = pod.containers[0]!;
  expect(resolveMounts(pod, app, "/v")).toEqual(["cfg", "db", "sa"].map((name) => ({ source: emptyDirPath("/v", pod.uid, name), target: `/mnt/${name}`, readOnly: true, create: undefined })));
  const fail = (message: string): never => {
    throw new Error(message);
  };
  expect(app.volumeMounts.map((mount) => mountSource({ pod, volumeDir: (name) => `/pods/${pod.uid}/volumes/${name}` }, mount, fail))).toEqual(["cfg", "db", "sa"].map((name) => `/pods/${pod.uid}/volumes/${name}`));
});
