/**
 * The downward API in the loop (fake runtime, fake clock): a container is started with its
 * valueFrom env resolved against the sandbox it joins; a downwardAPI volume is written before the
 * containers start, atomically (`..data` -> a timestamped directory, names linked through it), and
 * rewritten on a later pass once an API pod's labels changed; a reference no container satisfies
 * holds the containers back (FailedMount) or fails the start (CreateContainerConfigError).
 */
import { describe, expect, test } from "bun:test";
import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { NodeAllocatable } from "../../src/eviction/node-allocatable.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { harness } from "../kubelet-harness.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";

const allocatable: NodeAllocatable = { cpuMillis: 2000n, memoryBytes: 4n * 1024n ** 3n, ephemeralStorageBytes: 10n ** 10n, pods: 110 };

function spec(containerExtra: Record<string, unknown>, volumes: unknown[] = [], labels: Record<string, string> = { app: "web" }): PodSpec {
  return validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo", labels },
      spec: { volumes, containers: [{ name: "app", image: "busybox", command: ["sleep", "60"], resources: { limits: { memory: "32Mi" } }, ...containerExtra }] },
    },
    { file: "web.yaml", source: "/manifests/web.yaml", node: "lab" },
  );
}

const infoVolume = {
  name: "info",
  downwardAPI: {
    items: [
      { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
      { path: "limits/memory", resourceFieldRef: { containerName: "app", resource: "limits.memory", divisor: "1Mi" }, mode: 0o600 },
    ],
  },
};

describe("env from the downward API", () => {
  test("the runtime is given the values, the pod IP its sandbox's; the spec keeps its references", async () => {
    const h = harness({ allocatable });
    const web = spec({
      env: [
        { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
        { name: "MEM_MI", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
        { name: "CPU_M", valueFrom: { resourceFieldRef: { resource: "limits.cpu", divisor: "1m" } } },
      ],
    });
    await h.kubelet.sync(desired(web));
    const started = [...h.runtime.containers.values()].map((c) => c.config.container.env);
    expect(started).toEqual([
      [
        { name: "POD_NAME", value: "web-lab" },
        { name: "POD_IP", value: "10.0.0.2" },
        { name: "MEM_MI", value: "32" },
        { name: "CPU_M", value: "2000" },
      ],
    ]);
    expect(h.pod(web.key)!.spec.containers[0]!.env[0]).toEqual({ name: "POD_NAME", value: "", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } });
  });

  test("$(VAR) references in env values and the command are expanded with the resolved values", async () => {
    const h = harness({ allocatable });
    const web = spec({
      command: ["sh", "-c", "echo $(POD_NAME) at $(URL)"],
      env: [
        { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
        { name: "URL", value: "http://$(POD_IP):8080" },
      ],
    });
    await h.kubelet.sync(desired(web));
    const [started] = [...h.runtime.containers.values()].map((c) => c.config.container);
    expect(started!.command).toEqual(["sh", "-c", "echo web-lab at http://10.0.0.2:8080"]);
    expect(started!.env.at(-1)).toEqual({ name: "URL", value: "http://10.0.0.2:8080" });
  });

  test("a resourceFieldRef naming no container fails the start with CreateContainerConfigError", async () => {
    const h = harness({ allocatable });
    const web = spec({ env: [{ name: "X", valueFrom: { resourceFieldRef: { containerName: "gone", resource: "limits.cpu" } } }] });
    await h.kubelet.sync(desired(web));
    expect(h.runtime.containers.size).toBe(0);
    expect(h.pod(web.key)!.app[0]!.terminated).toMatchObject({ reason: "CreateContainerConfigError", message: "container gone not found" });
    expect(h.events.map((e) => `${e.reason} ${e.message}`)).toContain("Failed Error: container gone not found");
  });
});

describe("downwardAPI volumes", () => {
  test("written before the container starts, atomically, with each file's mode", async () => {
    using dir = tempDir();
    const h = harness({ allocatable });
    h.runtime.volumeRoot = dir.path;
    const web = spec({ volumeMounts: [{ name: "info", mountPath: "/etc/info" }] }, [infoVolume]);
    await h.kubelet.sync(desired(web));
    expect(h.runtime.containers.size).toBe(1);
    const root = join(dir.path, web.uid, "info");
    const entries = readdirSync(root).sort();
    expect(entries).toHaveLength(4);
    const [tsDir] = entries.filter((name) => /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\./.test(name));
    expect(entries).toEqual(["..data", tsDir!, "labels", "limits"].sort());
    expect(readlinkSync(join(root, "..data"))).toBe(tsDir!);
    expect(readlinkSync(join(root, "labels"))).toBe("..data/labels");
    expect(readlinkSync(join(root, "limits"))).toBe("..data/limits");
    expect(readFileSync(join(root, "labels"), "utf8")).toBe('app="web"');
    expect(readFileSync(join(root, "limits/memory"), "utf8")).toBe("32");
    expect(statSync(join(root, "labels")).mode & 0o777).toBe(0o644);
    expect(statSync(join(root, "limits/memory")).mode & 0o777).toBe(0o600);
  });

  test("an API pod's new labels are written on its next pass; an unchanged pass writes nothing", async () => {
    using dir = tempDir();
    const h = harness({ allocatable });
    h.runtime.volumeRoot = dir.path;
    const first = { ...spec({}, [infoVolume]), api: { createdAt: h.clock.now() } };
    await h.kubelet.sync(desired(first));
    const root = join(dir.path, first.uid, "info");
    const before = readlinkSync(join(root, "..data"));
    await h.kubelet.sync(desired(first));
    expect(readlinkSync(join(root, "..data"))).toBe(before);

    // An update through the API changes metadata only: the same uid, the same containers.
    const relabelled = { ...first, labels: { app: "web", track: "canary" } };
    await h.advance(1);
    await h.kubelet.sync(desired(relabelled));
    const after = readlinkSync(join(root, "..data"));
    expect(after).not.toBe(before);
    expect(readFileSync(join(root, "labels"), "utf8")).toBe('app="web"\ntrack="canary"');
    // The previous directory is gone; the container was not restarted.
    expect(readdirSync(root).filter((name) => name.startsWith("..") && name !== "..data")).toEqual([after]);
    expect(h.runtime.containers.size).toBe(1);
    expect(lstatSync(join(root, "labels")).isSymbolicLink()).toBe(true);
  });

  test("a volume removed with a dead sandbox is written again on the next pass", async () => {
    using dir = tempDir();
    const h = harness({ allocatable });
    h.runtime.volumeRoot = dir.path;
    const web = spec({}, [infoVolume]);
    await h.kubelet.sync(desired(web));
    const root = join(dir.path, web.uid, "info");
    rmSync(join(dir.path, web.uid), { recursive: true });
    await h.kubelet.sync(desired(web));
    expect(readFileSync(join(root, "labels"), "utf8")).toBe('app="web"');
  });

  test("an item naming no container holds the containers back with FailedMount, retried later", async () => {
    using dir = tempDir();
    const h = harness({ allocatable });
    h.runtime.volumeRoot = dir.path;
    const web = spec({}, [{ name: "info", downwardAPI: { items: [{ path: "cpu", resourceFieldRef: { containerName: "gone", resource: "limits.cpu" } }] } }]);
    await h.kubelet.sync(desired(web));
    expect(h.runtime.containers.size).toBe(0);
    expect(h.events.map((e) => `${e.type} ${e.reason} ${e.message}`)).toEqual([`Warning FailedMount MountVolume.SetUp failed for volume "info" : container gone not found`]);
    await h.advance(2);
    expect(h.events.filter((e) => e.reason === "FailedMount").length).toBeGreaterThanOrEqual(2);
    expect(h.runtime.containers.size).toBe(0);
  });
});
