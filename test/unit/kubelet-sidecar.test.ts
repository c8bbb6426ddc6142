import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { isPodReady } from "../../src/kubelet/status/pod-conditions.ts";
import { probe } from "../pod-builder.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

const check = { type: "exec" as const, command: ["check"] };

const sidecar = (name: string, extra = {}) => container(name, { restartPolicy: "Always", ...extra });

describe("native sidecars (init containers with restartPolicy Always)", () => {
  test("start in order; the next starts once the sidecar runs, not when it exits", async () => {
    const h = harness();
    h.runtime.behaviours.set("setup", { exitAfterMs: 1000, exitCode: 0 });
    const web = pod({ init: [container("setup"), sidecar("proxy"), sidecar("logs")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(3);
    expect(h.lines((e) => e.reason === "Started")).toEqual([
      "0.0s Started setup",
      "1.0s Started proxy",
      "1.0s Started logs",
      "1.0s Started web",
    ]);
    const record = h.pod(web.key)!;
    expect(record.phase).toBe("Running");
    expect(record.init.map((c) => c.state)).toEqual(["terminated", "running", "running"]);
  });

  test("a crashing sidecar does not block the app container and backs off on its own", async () => {
    const h = harness({ baseSeconds: 10 });
    h.runtime.behaviours.set("proxy", (attempt) => (attempt === 0 ? {} : { exitAfterMs: 100, exitCode: 1 }));
    const web = pod({ init: [sidecar("proxy")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    h.runtime.finish(h.runtime.running("proxy")!.id, 1);
    await h.advance(30);
    const record = h.pod(web.key)!;
    expect(record.app[0]!.state).toBe("running");
    expect(restartCountOf(record.app[0]!)).toBe(0);
    expect(restartCountOf(record.init[0]!)).toBeGreaterThanOrEqual(2);
    expect(h.events.some((e) => e.reason === "BackOff" && e.container === "proxy")).toBe(true);
    expect(record.phase).toBe("Running");
  });

  test("sidecars restart whatever the pod's restartPolicy", async () => {
    const h = harness();
    const job = pod({ name: "job", restartPolicy: "Never", init: [sidecar("proxy")], containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    h.runtime.finish(h.runtime.running("proxy")!.id, 0);
    await h.advance(1);
    expect(h.runtime.startsOf("proxy")).toBe(2);
  });

  test("on termination the app stops first, then the sidecars, last declared first", async () => {
    const h = harness();
    for (const name of ["web", "proxy", "logs"]) h.runtime.behaviours.set(name, { termDelayMs: 500 });
    const web = pod({ grace: 10, init: [sidecar("proxy"), sidecar("logs")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(5);
    expect(h.lines((e) => e.reason === "Killing" || e.reason === "Exited")).toEqual([
      "0.0s Killing web",
      "0.5s Exited web exited with code 143 (Error)",
      "0.5s Killing logs",
      "1.0s Exited logs exited with code 143 (Error)",
      "1.0s Killing proxy",
      "1.5s Exited proxy exited with code 143 (Error)",
    ]);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("the stop of all containers fits in one grace period", async () => {
    const h = harness();
    for (const name of ["web", "proxy"]) h.runtime.behaviours.set(name, { ignoreSigterm: true });
    const web = pod({ grace: 6, init: [sidecar("proxy")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(20);
    // web is killed at 6s; proxy gets what is left of the grace, which is the 2s floor.
    expect(h.lines((e) => e.reason === "GraceExpired")).toEqual(["6.0s GraceExpired web", "8.0s GraceExpired proxy"]);
  });

  test("a Job-like pod (Never) with a sidecar reaches Succeeded, and the sidecar is stopped", async () => {
    const h = harness();
    h.runtime.behaviours.set("job", { exitAfterMs: 2000, exitCode: 0 });
    const job = pod({ name: "job", restartPolicy: "Never", init: [sidecar("proxy")], containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    await h.advance(5);
    const record = h.pod(job.key)!;
    expect(record.phase).toBe("Succeeded");
    expect(record.init[0]!.state).toBe("terminated");
    expect(h.lines((e) => e.reason === "Killing")).toEqual(["2.0s Killing proxy"]);
    expect(h.runtime.startsOf("proxy")).toBe(1);
  });

  test("a Job-like pod whose main container fails is Failed even though its sidecar ran", async () => {
    const h = harness();
    h.runtime.behaviours.set("job", { exitAfterMs: 1000, exitCode: 3 });
    const job = pod({ name: "job", restartPolicy: "Never", init: [sidecar("proxy")], containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    await h.advance(5);
    expect(h.pod(job.key)!.phase).toBe("Failed");
  });

  test("with a startup probe, the next container starts only once the sidecar's probe has passed", async () => {
    let scripted!: ScriptedProber;
    const h = harness({ probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)) });
    scripted.scripts.set("proxy/startup", (call) => ({ ok: call >= 2 }));
    const web = pod({
      init: [sidecar("proxy", { startupProbe: probe(check, { periodSeconds: 1, failureThreshold: 30 }) })],
      containers: [container("web")],
    });
    await h.kubelet.sync(desired(web));
    await h.advance(3);
    expect(h.lines((e) => e.reason === "Started")).toEqual(["0.0s Started proxy", "2.0s Started web"]);
  });

  test("a sidecar's readiness gates the pod's Ready condition", async () => {
    let scripted!: ScriptedProber;
    const h = harness({ probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)) });
    scripted.scripts.set("proxy/readiness", () => ({ ok: false }));
    const web = pod({
      init: [sidecar("proxy", { readinessProbe: probe(check, { periodSeconds: 1 }) })],
      containers: [container("web")],
    });
    await h.kubelet.sync(desired(web));
    await h.advance(2);
    const record = h.pod(web.key)!;
    expect(record.app[0]!.ready).toBe(true);
    expect(isPodReady(record)).toBe(false);
    scripted.scripts.delete("proxy/readiness");
    await h.advance(1);
    expect(isPodReady(h.pod(web.key)!)).toBe(true);
  });
});
