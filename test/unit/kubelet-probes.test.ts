import { describe, expect, test } from "bun:test";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import type { ContainerSpec } from "../../src/manifest/types.ts";

const exec = { type: "exec" as const, command: ["check"] };

function setup(spec: Partial<ContainerSpec>, options: { grace?: number; baseSeconds?: number; restartPolicy?: "Always" | "Never" } = {}) {
  let scripted!: ScriptedProber;
  const h = harness({
    baseSeconds: options.baseSeconds ?? 10,
    probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)),
  });
  const web = pod({ grace: options.grace ?? 30, restartPolicy: options.restartPolicy ?? "Always", containers: [container("web", spec)] });
  const start = h.clock.now();
  return { h, web, prober: () => scripted, start, record: () => h.pod(web.key)!.app[0]! };
}

describe("probes in the loop", () => {
  test("readiness: not ready until successThreshold successes; ready after, on schedule from initialDelay", async () => {
    const t = setup({ readinessProbe: probe(exec, { initialDelaySeconds: 1, periodSeconds: 1, successThreshold: 2 }) });
    await t.h.kubelet.sync(desired(t.web));
    expect(t.record().ready).toBe(false);
    await t.h.advance(1.5);
    expect(t.record().ready).toBe(false);
    await t.h.advance(1);
    expect(t.record().ready).toBe(true);
    expect(t.prober().times("web/readiness", t.start)).toEqual([1, 2]);
    expect(t.h.lines((e) => e.reason === "Ready")).toEqual(["2.0s Ready web"]);
  });

  test("readiness failures only flip ready after failureThreshold, never restart", async () => {
    const t = setup({ readinessProbe: probe(exec, { periodSeconds: 1 }) });
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(0.5);
    expect(t.record().ready).toBe(true);
    t.prober().scripts.set("web/readiness", () => ({ ok: false }));
    await t.h.advance(2.4);
    expect(t.record().ready).toBe(true);
    await t.h.advance(0.5);
    expect(t.record().ready).toBe(false);
    await t.h.advance(30);
    expect(t.h.runtime.startsOf("web")).toBe(1);
    expect(t.h.events.filter((e) => e.reason === "Killing")).toEqual([]);
    const unhealthy = t.h.events.filter((e) => e.reason === "Unhealthy");
    expect(unhealthy[0]!.message).toBe("Readiness probe failed: HTTP probe failed with statuscode: 503");
    expect(t.h.lines((e) => e.reason === "NotReady")).toEqual(["3.0s NotReady web"]);
    t.prober().scripts.delete("web/readiness");
    await t.h.advance(1);
    expect(t.record().ready).toBe(true);
  });

  test("liveness: failureThreshold failures kill the container with the kubelet's message; restart follows the policy and back-off", async () => {
    const t = setup({ livenessProbe: probe(exec, { periodSeconds: 2, failureThreshold: 3 }) }, { grace: 5 });
    t.prober().scripts.set("web/liveness", (call) => ({ ok: call < 1, message: "dial tcp 127.0.0.1:8080: connect: connection refused" }));
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(6.5);
    expect(t.h.lines((e) => ["Unhealthy", "Killing", "Exited", "Started"].includes(e.reason))).toEqual([
      "0.0s Started web",
      "2.0s Unhealthy web",
      "4.0s Unhealthy web",
      "6.0s Unhealthy web",
      "6.0s Killing web",
      "6.0s Exited web exited with code 143 (Error) after failing its liveness probe",
      "6.0s Started web",
      "6.0s Unhealthy web", // the new attempt is probed at once (initialDelaySeconds 0)
    ]);
    expect(t.h.events.find((e) => e.reason === "Killing")!.message).toBe("Container web failed liveness probe, will be restarted");
    expect(t.h.events.find((e) => e.reason === "Unhealthy")!.message).toBe("Liveness probe failed: dial tcp 127.0.0.1:8080: connect: connection refused");
    // The new attempt fails again: this time the restart waits out the back-off.
    await t.h.advance(7);
    expect(t.record().waiting?.reason).toBe("CrashLoopBackOff");
    await t.h.advance(10);
    expect(t.h.runtime.startsOf("web")).toBe(3);
  });

  test("liveness kill under restartPolicy Never: no restart, the pod fails", async () => {
    const t = setup({ livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1 }) }, { restartPolicy: "Never" });
    t.prober().scripts.set("web/liveness", () => ({ ok: false }));
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(5);
    expect(t.h.runtime.startsOf("web")).toBe(1);
    expect(t.h.pod(t.web.key)!.phase).toBe("Failed");
    // The kubelet promises a restart only when the policy at the kill gives one.
    expect(t.h.events.find((e) => e.reason === "Killing")!.message).toBe("Container web failed liveness probe");
  });

  test("liveness kill of a container whose own restartPolicy is Never under pod Always (KEP-5307): no restart promised, none made; with its own OnFailure under pod Never, restarted", async () => {
    const never = setup({ restartPolicy: "Never", livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1 }) });
    never.prober().scripts.set("web/liveness", () => ({ ok: false }));
    await never.h.kubelet.sync(desired(never.web));
    await never.h.advance(5);
    expect(never.h.events.find((e) => e.reason === "Killing")!.message).toBe("Container web failed liveness probe");
    expect(never.h.runtime.startsOf("web")).toBe(1);
    expect(never.h.pod(never.web.key)!.phase).toBe("Failed");

    const onFailure = setup({ restartPolicy: "OnFailure", livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1 }) }, { restartPolicy: "Never" });
    onFailure.prober().scripts.set("web/liveness", (call) => ({ ok: call > 0 }));
    await onFailure.h.kubelet.sync(desired(onFailure.web));
    await onFailure.h.advance(5);
    expect(onFailure.h.events.find((e) => e.reason === "Killing")!.message).toBe("Container web failed liveness probe, will be restarted");
    expect(onFailure.h.runtime.startsOf("web")).toBe(2);
    expect(onFailure.h.pod(onFailure.web.key)!.phase).toBe("Running");
  });

  test("startup gates liveness and readiness; once it succeeds they begin", async () => {
    const t = setup({
      startupProbe: probe(exec, { periodSeconds: 1, failureThreshold: 10 }),
      livenessProbe: probe(exec, { periodSeconds: 1 }),
      readinessProbe: probe(exec, { periodSeconds: 1 }),
    });
    t.prober().scripts.set("web/startup", (call) => ({ ok: call >= 3 }));
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(0.5);
    expect(t.record().started).toBe(false);
    await t.h.advance(3);
    expect(t.record().started).toBe(true);
    expect(t.prober().times("web/startup", t.start)).toEqual([0, 1, 2, 3]);
    expect(t.prober().times("web/liveness", t.start)[0]).toBe(3);
    expect(t.prober().times("web/readiness", t.start)[0]).toBe(3);
    expect(t.record().ready).toBe(true);
  });

  test("a startup failure kills and restarts the container with the startup wording", async () => {
    const t = setup({ startupProbe: probe(exec, { periodSeconds: 1, failureThreshold: 2 }) }, { grace: 3 });
    t.prober().scripts.set("web/startup", () => ({ ok: false, message: "command timed out" }));
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(1.5);
    expect(t.h.events.find((e) => e.reason === "Killing")!.message).toBe("Container web failed startup probe, will be restarted");
    expect(t.h.events.find((e) => e.reason === "Unhealthy")!.message).toBe("Startup probe failed: command timed out");
    expect(t.h.runtime.startsOf("web")).toBe(2);
  });

  test("a probe-level terminationGracePeriodSeconds overrides the pod's for a liveness kill", async () => {
    const t = setup({ livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1, terminationGracePeriodSeconds: 3 }) }, { grace: 60 });
    t.h.runtime.behaviours.set("web", { ignoreSigterm: true });
    t.prober().scripts.set("web/liveness", () => ({ ok: false }));
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(10);
    expect(t.h.lines((e) => e.reason === "Killing" || e.reason === "GraceExpired").slice(0, 2)).toEqual([
      "0.0s Killing web",
      "3.0s GraceExpired web",
    ]);
  });

  test("a slow probe does not hold up another container's probes", async () => {
    let scripted!: ScriptedProber;
    const h = harness({ probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)) });
    const slow = pod({ name: "slow", containers: [container("slow", { readinessProbe: probe(exec, { periodSeconds: 1, timeoutSeconds: 5 }) })] });
    const fast = pod({ name: "fast", containers: [container("fast", { readinessProbe: probe(exec, { periodSeconds: 1 }) })] });
    scripted.scripts.set("slow/readiness", () => ({ ok: false, durationMs: 5000, message: "command timed out" }));
    const start = h.clock.now();
    await h.kubelet.sync(desired(slow, fast));
    await h.advance(4.5);
    expect(scripted.times("fast/readiness", start)).toEqual([0, 1, 2, 3, 4]);
    expect(scripted.times("slow/readiness", start)).toEqual([0]);
  });
});
