/**
 * postStart and preStop's sleep on the docker runtime: the postStart exec runs inside the container
 * (docker exec) and the container counts as started only once it returned; a failing hook kills and
 * restarts it; a preStop sleep delays SIGTERM. Pods live in mk-test under names unique to this run.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PodSpec } from "../../src/manifest/types.ts";
import { podStatus } from "../../src/kubelet/pod-status.ts";
import { DockerRuntime } from "../../src/runtime/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { desired, pod, type PodOptions } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { bbContainer as bb, describeDocker, docker, PAUSE } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");

let volumeRoot: string;
let runtime: DockerRuntime;
let h: ReturnType<typeof realHarness>;
const created: PodSpec[] = [];

beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-hooks-docker-"));
  runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  for (const spec of created.splice(0)) {
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  }
  rmSync(volumeRoot, { recursive: true, force: true });
});

function mkPod(name: string, options: PodOptions): PodSpec {
  const spec = pod({ namespace: "mk-test", node: "", grace: 2, ...options, name: `${name}-${RUN}` });
  spec.uid = `${RUN}-${name}`;
  spec.configHash = `hash-${RUN}-${name}`;
  created.push(spec);
  return spec;
}

/** PID 1 in a container ignores SIGTERM without a handler: this one exits 0 on it. */
const SERVE = "trap 'exit 0' TERM; while true; do sleep 0.1; done";

describeDocker("lifecycle hooks on the docker runtime", () => {
  test("postStart exec runs in the container, which is started only once the hook returned", async () => {
    const web = mkPod("warm", { containers: [bb("web", SERVE, { postStart: { type: "exec", command: ["sh", "-c", "sleep 1; echo warm > /tmp/warm"] } })] });
    let startedAt: number | undefined;
    let sawCreating = false;
    const started = new Promise<void>((resolve) =>
      h.kubelet.onPodSynced((record) => {
        const status = podStatus(record, { runtimeName: "docker" }).containerStatuses?.[0];
        if (status?.state?.waiting?.reason === "ContainerCreating" && record.app[0]?.containerId) sawCreating = true;
        if (status?.started && startedAt === undefined) {
          startedAt = Date.now();
          resolve();
        }
      }),
    );
    await h.kubelet.sync(desired(web));
    const start = await h.event((e) => e.reason === "Started", 20_000);
    await Promise.race([started, h.event(() => false, 20_000, "started")]);
    expect(sawCreating).toBe(true);
    expect(startedAt! - start.at).toBeGreaterThanOrEqual(900);
    const id = h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
    expect(await runtime.execSync(id, ["cat", "/tmp/warm"], 5000)).toMatchObject({ exitCode: 0, output: "warm\n" });
  });

  test("postStart exec failing: FailedPostStartHook, a Killing, and a restart", async () => {
    const web = mkPod("cold", { containers: [bb("web", SERVE, { postStart: { type: "exec", command: ["sh", "-c", "exit 3"] } })] });
    await h.kubelet.sync(desired(web));
    expect(await h.event((e) => e.reason === "FailedPostStartHook", 20_000)).toMatchObject({ type: "Warning", message: "PostStartHook failed" });
    expect((await h.event((e) => e.reason === "Killing")).message).toBe("FailedPostStartHook");
    await h.event((e) => e.reason === "Exited", 10_000);
    await h.count((e) => e.reason === "Started", 2, 20_000);
  });

  test("preStop sleep holds SIGTERM back for its seconds", async () => {
    const web = mkPod("linger", { grace: 5, containers: [bb("web", SERVE, { preStop: { type: "sleep", seconds: 1 } })] });
    await h.kubelet.sync(desired(web));
    await h.event((e) => e.reason === "Started", 20_000);
    await h.kubelet.sync(desired());
    const killing = await h.event((e) => e.reason === "Killing");
    const exited = await h.event((e) => e.reason === "Exited", 10_000);
    expect(exited.message).toBe("Container web exited with code 0 (Completed)");
    expect(exited.at - killing.at).toBeGreaterThanOrEqual(1000);
    expect(exited.at - killing.at).toBeLessThan(4500);
    expect(h.events.some((e) => e.reason === "FailedPreStopHook" || e.reason === "GraceExpired")).toBe(false);
  });
});
