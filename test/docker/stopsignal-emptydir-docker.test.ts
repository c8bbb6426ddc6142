/**
 * On a real dockerd: KEP-4960, the spec's stop signal becomes the container's StopSignal (what the
 * engine reports back, and what a stop sends), so a container that handles only SIGUSR1 stops
 * within its grace; the engine's default is reported as SIGTERM. And a memory emptyDir: one tmpfs
 * engine volume of the sizeLimit's size, shared by the pod's containers, removed with the pod.
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { PodSpec } from "../../src/manifest/types.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { containerStatus } from "../../src/kubelet/status/pod-status.ts";
import { desired, pod } from "../pod-builder.ts";
import { waitForLog } from "../runtime-contract.ts";
import { bbContainer, BUSYBOX, describeDocker, docker, dockerLoopFixture } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");
const fx = dockerLoopFixture("mk-stopsignal-docker-");

function mkPod(name: string, containers: PodSpec["containers"]): PodSpec {
  const spec = pod({ namespace: "mk-test", node: "", grace: 20, name: `${name}-${RUN}`, containers });
  spec.uid = `${RUN}-${name}`;
  spec.configHash = `hash-${RUN}-${name}`;
  spec.volumes = [];
  fx.created.push(spec);
  return spec;
}

const ONLY_USR1 = "trap 'echo stopping; exit 0' USR1; trap '' TERM; echo ready; while true; do sleep 0.2; done";

describeDocker("stop signals on docker", () => {
  test("stopSignal SIGUSR1 stops a container that handles only SIGUSR1 within its grace; the engine reports it", async () => {
    const web = mkPod("usr1", [bbContainer("web", ONLY_USR1, { stopSignal: "SIGUSR1" }), bbContainer("plain", "trap 'exit 0' TERM; while true; do sleep 0.2; done")]);
    await fx.h.kubelet.sync(desired(web));
    await fx.h.count((e) => e.reason === "Started", 2, 20_000);
    const id = fx.h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
    await waitForLog(fx.runtime, id, "ready", 10_000);
    const inspected = await docker.getContainer(id).inspect();
    expect((inspected.Config as { StopSignal?: string }).StopSignal).toBe("SIGUSR1");
    await fx.h.kubelet.sync(desired(web)); // the pass that reads the engine's report back
    const [usr1, plain] = fx.h.kubelet.pods.get(web.key)!.app.map((c) => containerStatus(c, "docker").stopSignal);
    expect([usr1, plain]).toEqual(["SIGUSR1", "SIGTERM"]);
    await fx.h.kubelet.sync(desired());
    const exited = await fx.h.event((e) => e.reason === "Exited" && e.container === "web", 15_000);
    // Exit 0 is the USR1 trap's: SIGTERM would have been ignored until a SIGKILL (137) at the grace.
    expect(exited.message).toBe("Container web exited with code 0 (Completed)");
  });
});

describeDocker("an image's STOPSIGNAL on docker", () => {
  test("without a spec signal the image's STOPSIGNAL stops the container, and is reported", async () => {
    // A commit keeps the container's config: its StopSignal becomes the image's STOPSIGNAL.
    const base = await docker.createContainer({ Image: BUSYBOX, Cmd: ["true"], StopSignal: "SIGUSR1", Labels: { "io.minikubelet.test": RUN } });
    const image = `minikubelet-test/stopsignal:${RUN}`;
    try {
      await base.commit({ repo: "minikubelet-test/stopsignal", tag: RUN });
      expect(((await docker.getImage(image).inspect()).Config as { StopSignal?: string }).StopSignal).toBe("SIGUSR1");
      const web = mkPod("image", [bbContainer("web", ONLY_USR1, { image, imagePullPolicy: "Never" })]);
      await fx.h.kubelet.sync(desired(web));
      await fx.h.event((e) => e.reason === "Started", 20_000);
      const id = fx.h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
      await waitForLog(fx.runtime, id, "ready", 10_000);
      await fx.h.kubelet.sync(desired(web)); // the pass that reads the engine's report back
      expect(containerStatus(fx.h.kubelet.pods.get(web.key)!.app[0]!, "docker").stopSignal).toBe("SIGUSR1");
      await fx.h.kubelet.sync(desired());
      const exited = await fx.h.event((e) => e.reason === "Exited", 15_000);
      // Exit 0 is the USR1 trap's: SIGTERM would have been ignored until a SIGKILL (137) at the grace.
      expect(exited.message).toBe("Container web exited with code 0 (Completed)");
    } finally {
      await base.remove({ force: true }).catch(() => undefined);
      await docker.getImage(image).remove({ force: true }).catch(() => undefined);
    }
  });
});

describeDocker("a memory emptyDir on docker", () => {
  test("is a tmpfs of its sizeLimit that the pod's containers share, removed with the pod", async () => {
    const MI = 1024 * 1024;
    const mount = { name: "mem", mountPath: "/mem", readOnly: false };
    const writer = bbContainer("writer", `echo shared > /mem/note; dd if=/dev/zero of=/mem/blob bs=1024 count=2048 2>/dev/null || echo full; ${"trap 'exit 0' TERM; while true; do sleep 0.2; done"}`, { volumeMounts: [mount] });
    const reader = bbContainer("reader", `while [ ! -f /mem/note ]; do sleep 0.1; done; cat /mem/note; grep ' /mem ' /proc/mounts; trap 'exit 0' TERM; while true; do sleep 0.2; done`, { volumeMounts: [mount] });
    const web = mkPod("mem", [writer, reader]);
    web.volumes = [{ name: "mem", type: "emptyDir", medium: "Memory", sizeLimit: "1Mi", sizeLimitBytes: MI }];
    await fx.h.kubelet.sync(desired(web));
    await fx.h.count((e) => e.reason === "Started", 2, 20_000);
    const [writerId, readerId] = fx.h.kubelet.pods.get(web.key)!.app.map((c) => c.containerId!);
    expect(await waitForLog(fx.runtime, writerId!, "full", 10_000)).toContain("full");
    const seen = await waitForLog(fx.runtime, readerId!, "/mem", 10_000);
    expect(seen).toContain("shared");
    expect(seen).toMatch(/ \/mem tmpfs .*size=1024k/);
    const volumes = async () => (await docker.listVolumes({ filters: { label: [`${LABEL.podUid}=${web.uid}`] } })).Volumes ?? [];
    expect((await volumes()).length).toBe(1);
    await fx.h.kubelet.sync(desired());
    await fx.h.count((e) => e.reason === "Exited", 2, 15_000);
    await fx.h.kubelet.idle();
    expect(await volumes()).toEqual([]);
  });

  test("keeps its contents while no container of the pod runs, as a restart finds them", async () => {
    // Each attempt adds a line and exits until it finds the lines of the two before it.
    const counter = bbContainer("counter", `echo x >> /mem/lines; n=$(wc -l < /mem/lines); echo "count $n"; [ "$n" -ge 3 ] && { trap 'exit 0' TERM; while true; do sleep 0.2; done; }; exit 1`, { volumeMounts: [{ name: "mem", mountPath: "/mem", readOnly: false }] });
    const web = mkPod("memkeep", [counter]);
    web.volumes = [{ name: "mem", type: "emptyDir", medium: "Memory" }];
    await fx.h.kubelet.sync(desired(web));
    await fx.h.count((e) => e.reason === "Started", 3, 20_000);
    const id = fx.h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
    expect(await waitForLog(fx.runtime, id, "count", 10_000)).toContain("count 3");
  });
});
