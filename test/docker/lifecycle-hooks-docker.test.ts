/**
 * postStart and preStop's sleep on the docker runtime: the postStart exec runs inside the container
 * (docker exec) and the container counts as started only once it returned; a failing hook kills and
 * restarts it; a preStop sleep delays SIGTERM. Pods live in mk-test under names unique to this run.
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { PodSpec } from "../../src/manifest/types.ts";
import { podStatus } from "../../src/kubelet/status/pod-status.ts";
import { desired, pod, type PodOptions } from "../pod-builder.ts";
import { bbContainer as bb, describeDocker, docker, dockerLoopFixture } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");

const fx = dockerLoopFixture("mk-hooks-docker-");

function mkPod(name: string, options: PodOptions): PodSpec {
  const spec = pod({ namespace: "mk-test", node: "", grace: 2, ...options, name: `${name}-${RUN}` });
  spec.uid = `${RUN}-${name}`;
  spec.configHash = `hash-${RUN}-${name}`;
  fx.created.push(spec);
  return spec;
}

/** PID 1 in a container ignores SIGTERM without a handler: this one exits 0 on it. */
const SERVE = "trap 'exit 0' TERM; while true; do sleep 0.1; done";

describeDocker("lifecycle hooks on the docker fx.runtime", () => {
  test("postStart exec runs in the container, which is started only once the hook returned", async () => {
    const web = mkPod("warm", { containers: [bb("web", SERVE, { postStart: { type: "exec", command: ["sh", "-c", "sleep 1; echo warm > /tmp/warm"] } })] });
    let startedAt: number | undefined;
    let sawCreating = false;
    const started = new Promise<void>((resolve) =>
      fx.h.kubelet.onPodSynced((record) => {
        const status = podStatus(record, { runtimeName: "docker" }).containerStatuses?.[0];
        if (status?.state?.waiting?.reason === "ContainerCreating" && record.app[0]?.containerId) sawCreating = true;
        if (status?.started && startedAt === undefined) {
          startedAt = Date.now();
          resolve();
        }
      }),
    );
    await fx.h.kubelet.sync(desired(web));
    const start = await fx.h.event((e) => e.reason === "Started", 20_000);
    await Promise.race([started, fx.h.event(() => false, 20_000, "started")]);
    expect(sawCreating).toBe(true);
    expect(startedAt! - start.at).toBeGreaterThanOrEqual(900);
    const id = fx.h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
    expect(await fx.runtime.execSync(id, ["cat", "/tmp/warm"], 5000)).toMatchObject({ exitCode: 0, output: "warm\n" });
  });

  test("postStart exec failing: FailedPostStartHook, a Killing, and a restart", async () => {
    const web = mkPod("cold", { containers: [bb("web", SERVE, { postStart: { type: "exec", command: ["sh", "-c", "exit 3"] } })] });
    await fx.h.kubelet.sync(desired(web));
    expect(await fx.h.event((e) => e.reason === "FailedPostStartHook", 20_000)).toMatchObject({ type: "Warning", message: "PostStartHook failed" });
    expect((await fx.h.event((e) => e.reason === "Killing")).message).toBe("FailedPostStartHook");
    await fx.h.event((e) => e.reason === "Exited", 10_000);
    await fx.h.count((e) => e.reason === "Started", 2, 20_000);
  });

  test("preStop sleep holds SIGTERM back for its seconds", async () => {
    const web = mkPod("linger", { grace: 5, containers: [bb("web", SERVE, { preStop: { type: "sleep", seconds: 1 } })] });
    await fx.h.kubelet.sync(desired(web));
    await fx.h.event((e) => e.reason === "Started", 20_000);
    await fx.h.kubelet.sync(desired());
    const killing = await fx.h.event((e) => e.reason === "Killing");
    const exited = await fx.h.event((e) => e.reason === "Exited", 10_000);
    expect(exited.message).toBe("Container web exited with code 0 (Completed)");
    // The TERM waited for the preStop's second; the trap then ended it (0), not a SIGKILL at the 5 s grace.
    expect(exited.at - killing.at).toBeGreaterThanOrEqual(1000);
    expect(fx.h.events.some((e) => e.reason === "FailedPreStopHook" || e.reason === "GraceExpired")).toBe(false);
  });
});
