/**
 * KEP-4960 on a real dockerd: the spec's stop signal becomes the container's StopSignal (what the
 * engine reports back, and what a stop sends), so a container that handles only SIGUSR1 stops
 * within its grace; the engine's default is reported as SIGTERM.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PodSpec } from "../../src/manifest/types.ts";
import { DockerRuntime } from "../../src/runtime/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { containerStatus } from "../../src/kubelet/pod-status.ts";
import { desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { waitForLog } from "../runtime-contract.ts";
import { bbContainer, describeDocker, docker, PAUSE } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");
let volumeRoot: string;
let runtime: DockerRuntime;
let h: ReturnType<typeof realHarness>;
const created: PodSpec[] = [];

beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-stopsignal-docker-"));
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

function mkPod(name: string, containers: PodSpec["containers"]): PodSpec {
  const spec = pod({ namespace: "mk-test", node: "", grace: 20, name: `${name}-${RUN}`, containers });
  spec.uid = `${RUN}-${name}`;
  spec.configHash = `hash-${RUN}-${name}`;
  spec.volumes = [];
  created.push(spec);
  return spec;
}

const ONLY_USR1 = "trap 'echo stopping; exit 0' USR1; trap '' TERM; echo ready; while true; do sleep 0.2; done";

describeDocker("stop signals on docker", () => {
  test("stopSignal SIGUSR1 stops a container that handles only SIGUSR1 within its grace; the engine reports it", async () => {
    const web = mkPod("usr1", [bbContainer("web", ONLY_USR1, { stopSignal: "SIGUSR1" }), bbContainer("plain", "trap 'exit 0' TERM; while true; do sleep 0.2; done")]);
    await h.kubelet.sync(desired(web));
    await h.count((e) => e.reason === "Started", 2, 20_000);
    const id = h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
    await waitForLog(runtime, id, "ready", 10_000);
    const inspected = await docker.getContainer(id).inspect();
    expect((inspected.Config as { StopSignal?: string }).StopSignal).toBe("SIGUSR1");
    await h.kubelet.sync(desired(web)); // the pass that reads the engine's report back
    const [usr1, plain] = h.kubelet.pods.get(web.key)!.app.map((c) => containerStatus(c, "docker").stopSignal);
    expect([usr1, plain]).toEqual(["SIGUSR1", "SIGTERM"]);
    const stopAt = Date.now();
    await h.kubelet.sync(desired());
    const exited = await h.event((e) => e.reason === "Exited" && e.container === "web", 15_000);
    expect(exited.message).toBe("Container web exited with code 0 (Completed)");
    expect(Date.now() - stopAt).toBeLessThan(10_000);
  });
});
