/**
 * Issue 25: volumes at their mountPath on the process runtime, run as root (as the suite is, for its mounts): the
 * container sees its emptyDir at the mountPath, in a mount namespace of its own (the host's path
 * keeps its own contents), read-only where asked; an exec sees what the container sees. A mountPath
 * missing on the host is not created: the container runs as before and the runtime says why.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerSpec } from "../../src/manifest/types.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { processRuntimes } from "../process-runtime-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";

const runtimes = processRuntimes("mounts");

/** What the container wrote to `file`, once it has: the shell's redirection makes the file before echo writes to it. */
async function written(file: string): Promise<string> {
  const text = () => (existsSync(file) ? readFileSync(file, "utf8") : "");
  for (let i = 0; i < 200 && text() === ""; i++) await Bun.sleep(10);
  return text();
}

const tempRoot = runtimes.tempRoot;

async function start(root: string, container: ContainerSpec) {
  const runtime = runtimes.runtime(root);
  const pod = { ...contractPod("mounts", [container]), volumes: [{ name: "data", type: "emptyDir" as const }] };
  const sandbox = await runtime.runPodSandbox(pod);
  const id = await runtime.startContainer({ pod, container, kind: "app", attempt: 0, sandbox });
  runtimes.track(runtime, id);
  return { runtime, id, volume: runtime.emptyDirPath(pod.uid, "data") };
}

test("an emptyDir is seen at its mountPath, by the container and by an exec, and the host's path keeps its own contents", async () => {
  const root = tempRoot();
  const target = join(root, "srv", "data");
  mkdirSync(target, { recursive: true });
  const go = join(root, "go");
  const container: ContainerSpec = {
    ...contractContainer("main", ["sh", "-c", `echo from-container > ${target}/file; while [ ! -e ${go} ]; do sleep 0.05; done`]),
    volumeMounts: [{ name: "data", mountPath: target, readOnly: false }],
  };
  const { runtime, id, volume } = await start(root, container);
  expect(await written(join(volume, "file"))).toBe("from-container\n");
  expect(readdirSync(target)).toEqual([]);
  expect(runtime.unhonouredMounts(id)).toBeUndefined();
  const seen = await runtime.execSync(id, ["cat", `${target}/file`], 5000);
  expect({ exitCode: seen.exitCode, output: seen.output }).toEqual({ exitCode: 0, output: "from-container\n" });
  Bun.write(go, "");
  await waitForStatus(runtime, id, (status) => status.state === "exited");
});

test("a readOnly mount cannot be written through, and nothing reaches the volume", async () => {
  const root = tempRoot();
  const target = join(root, "ro");
  mkdirSync(target);
  const container: ContainerSpec = {
    ...contractContainer("main", ["sh", "-c", `echo x > ${target}/y`]),
    volumeMounts: [{ name: "data", mountPath: target, readOnly: true }],
  };
  const { runtime, id, volume } = await start(root, container);
  const status = await waitForStatus(runtime, id, (s) => s.state === "exited");
  expect(status.exitCode).not.toBe(0);
  expect(readdirSync(volume)).toEqual([]);
  expect(readdirSync(target)).toEqual([]);
});

test("a mountPath missing on the host is not created: the container runs with its volume's host path in its env, and the runtime says why", async () => {
  const root = tempRoot();
  const target = join(root, "nowhere", "data");
  const container: ContainerSpec = {
    ...contractContainer("main", ["sh", "-c", 'echo "$MINIKUBELET_VOLUME_DATA"']),
    volumeMounts: [{ name: "data", mountPath: target, readOnly: false }],
  };
  const { runtime, id, volume } = await start(root, container);
  expect(runtime.unhonouredMounts(id)).toMatch(process.getuid?.() === 0 ? /mountPath ".*nowhere\/data" does not exist on the host, and is not created there/ : /does not run as root/);
  await waitForStatus(runtime, id, (s) => s.state === "exited");
  expect(await runtime.readLogs(id)).toBe(`${volume}\n`);
  expect(existsSync(target)).toBe(false);
});

test("the kubelet says why in one Warning event at the start, and the pod runs", async () => {
  const root = tempRoot();
  const runtime = runtimes.runtime(root);
  const h = realHarness(runtime);
  try {
    const target = join(root, "missing");
    const spec = pod({ name: "unmounted", containers: [container("app", { command: ["sleep", "30"], volumeMounts: [{ name: "data", mountPath: target, readOnly: false }] })] });
    spec.volumes = [{ name: "data", type: "emptyDir" }];
    await h.kubelet.sync(desired(spec));
    await h.count((e) => e.reason === "Started", 1);
    const warnings = h.events.filter((e) => e.type === "Warning").map((e) => [e.reason, e.container, e.message]);
    expect(warnings).toEqual([["VolumeMountsNotHonoured", "app", expect.stringContaining(`Volumes of container app are not at their mountPath: mountPath ${JSON.stringify(target)} does not exist on the host`)]]);
    expect(h.kubelet.pods.get(spec.key)?.phase).toBe("Running");
  } finally {
    await h.close();
  }
}, 20_000);

test("the ServiceAccount admission's token mount, its path missing on the host, is left to $MINIKUBELET_VOLUME_<NAME>: the author's own mount is bound, and nothing is said", async () => {
  const root = tempRoot();
  const target = join(root, "srv");
  mkdirSync(target);
  const token = "kube-api-access-x2k9f";
  const container: ContainerSpec = {
    ...contractContainer("main", ["sh", "-c", `echo "$MINIKUBELET_VOLUME_KUBE_API_ACCESS_X2K9F" > ${target}/where; sleep 30`]),
    volumeMounts: [
      { name: "data", mountPath: target, readOnly: false },
      { name: token, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
    ],
  };
  expect(existsSync("/var/run/secrets/kubernetes.io/serviceaccount")).toBe(false);
  const runtime = runtimes.runtime(root);
  const spec = { ...contractPod("mounts", [container]), volumes: [{ name: "data", type: "emptyDir" as const }, { name: token, type: "emptyDir" as const }] };
  const sandbox = await runtime.runPodSandbox(spec);
  const id = await runtime.startContainer({ pod: spec, container, kind: "app", attempt: 0, sandbox });
  runtimes.track(runtime, id);
  const volume = runtime.emptyDirPath(spec.uid, "data");
  expect(await written(join(volume, "where"))).toBe(`${runtime.emptyDirPath(spec.uid, token)}\n`);
  expect(readdirSync(target)).toEqual([]);
  expect(runtime.unhonouredMounts(id)).toBeUndefined();
});
