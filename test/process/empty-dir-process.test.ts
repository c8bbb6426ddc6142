/**
 * emptyDir sizeLimit and medium Memory with real processes: a pod that fills its emptyDir past the
 * limit is evicted on the eviction manager's next round (the kubelet's message, Failed); a memory
 * emptyDir is a tmpfs of the limit's size (as root), unmounted when the pod goes.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { isMountPoint } from "../../src/runtime/process/process-tmpfs.ts";
import type { PodSpec, Volume } from "../../src/manifest/types.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { waitForLog } from "../runtime-contract.ts";
import { rootMissing, testNeeding } from "../requirements.ts";

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-emptydir-"));
  runtime = new ProcessRuntime({ rootDir: root });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

/** An API pod (`api`), which the eviction manager may evict, or a static one. */
function podWith(name: string, volume: Volume, script: string, api = true): PodSpec {
  const spec = pod({ name, node: "", grace: 5, containers: [container(name, { command: ["sh", "-c", script], volumeMounts: [{ name: volume.name, mountPath: "/data", readOnly: false }] })] });
  spec.volumes = [volume];
  if (api) spec.api = { createdAt: Date.now() };
  return spec;
}

const MI = 1024 * 1024;
const KEEP_RUNNING = "trap 'exit 0' TERM; while true; do sleep 0.2; done";

test("an emptyDir filled past its sizeLimit evicts the pod: Evicted with the kubelet's message, Failed, its container stopped", async () => {
  const fill = `dd if=/dev/zero of="$MINIKUBELET_VOLUME_SCRATCH/blob" bs=1024 count=2048 2>/dev/null; echo written; ${KEEP_RUNNING}`;
  const web = podWith("filler", { name: "scratch", type: "emptyDir", sizeLimit: "1Mi", sizeLimitBytes: MI }, fill);
  await h.kubelet.sync(desired(web));
  await h.event((e) => e.reason === "Started");
  await waitForLog(runtime, h.kubelet.pods.get(web.key)!.app[0]!.containerId!, "written");
  await h.kubelet.checkLocalStorage(); // the round the 10 s timer would run
  const evicted = await h.event((e) => e.reason === "Evicted");
  expect(evicted.message).toBe('Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ');
  const exited = await h.event((e) => e.reason === "Exited", 10_000);
  expect(exited.message).toBe("Container filler exited with code 0 (Completed)");
  await h.kubelet.idle();
  expect(h.kubelet.pods.get(web.key)!.phase).toBe("Failed");
});

testNeeding("a memory emptyDir is a tmpfs of its sizeLimit: writes past it fail, and it is unmounted with the pod", rootMissing(), async () => {
  const script = `stat -f -c 'fs=%T' "$MINIKUBELET_VOLUME_MEM"; dd if=/dev/zero of="$MINIKUBELET_VOLUME_MEM/blob" bs=1024 count=2048 2>/dev/null || echo full; ${KEEP_RUNNING}`;
  const web = podWith("mem", { name: "mem", type: "emptyDir", medium: "Memory", sizeLimit: "1Mi", sizeLimitBytes: MI }, script, false);
  await h.kubelet.sync(desired(web));
  await h.event((e) => e.reason === "Started");
  const logs = await waitForLog(runtime, h.kubelet.pods.get(web.key)!.app[0]!.containerId!, "full");
  expect(logs).toContain("fs=tmpfs");
  const dir = runtime.emptyDirPath(web.uid, "mem");
  expect(isMountPoint(dir)).toBe(true);
  expect(h.events.some((e) => e.reason === "MemoryMediumUnavailable")).toBe(false);
  await h.kubelet.sync(desired());
  await h.event((e) => e.reason === "PodRemoved");
  await h.kubelet.idle();
  expect(isMountPoint(dir)).toBe(false);
});
