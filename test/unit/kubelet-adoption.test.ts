import { describe, expect, test } from "bun:test";
import type { PodRecord } from "../../src/kubelet/pod-state.ts";
import { agent, restart, world } from "../adoption-harness.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

describe("adoption after an agent restart", () => {
  test("running containers keep their ids, counts and readiness; nothing is started again", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web" });
    await first.kubelet.sync(desired(web));
    const before = first.kubelet.pods.get(web.key)!.app[0]!;
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    const after = second.kubelet.pods.get(web.key)!.app[0]!;
    expect(after.containerId).toBe(before.containerId!);
    expect(after.ready).toBe(true);
    expect(runtime.startsOf("web")).toBe(1);
    expect(second.events.map((e) => e.reason)).toEqual(["Adopted"]);
  });

  test("a crash-looping container's back-off continues where it was, not reset", async () => {
    const { clock, runtime, store } = world();
    runtime.behaviours.set("crash", { exitAfterMs: 100, exitCode: 1 });
    const first = agent(clock, runtime, store);
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await first.kubelet.sync(desired(crash));
    await first.advance(12); // starts at 0, 0.1, 10.2; waiting 20s after the crash at 10.3
    expect(runtime.startsOf("crash")).toBe(3);
    const second = await restart(clock, runtime, store, first.kubelet, desired(crash));
    await second.advance(18); // 30.0s: still inside the 20s wait that began at 10.3s
    expect(runtime.startsOf("crash")).toBe(3);
    await second.advance(0.5);
    expect(runtime.startsOf("crash")).toBe(4);
    expect(restartCountOf(second.kubelet.pods.get(crash.key)!.app[0]!)).toBe(3);
  });

  test("a container that exited while the agent was down counts as a crash, timed from its real finish", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web" });
    await first.kubelet.sync(desired(web));
    first.kubelet.stop();
    clock.stepSeconds(5);
    runtime.finish(runtime.running("web")!.id, 2); // nobody listening
    clock.stepSeconds(5);
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    const record = second.kubelet.pods.get(web.key)!.app[0]!;
    expect(second.events.find((e) => e.reason === "Exited")?.message).toBe("Container web exited with code 2 (Error)");
    expect(record.lastTermination?.exitCode).toBe(2);
    expect(record.lastTermination?.finishedAt).toBe(clock.now() - 5000);
    expect(restartCountOf(record)).toBe(1); // first restart is immediate
  });

  test("a manifest removed while the agent was down stops its pod", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web" });
    await first.kubelet.sync(desired(web));
    const second = await restart(clock, runtime, store, first.kubelet, desired());
    await second.advance(1);
    expect(second.events.map((e) => e.reason)).toContain("PodRemoved");
    expect(runtime.containers.size).toBe(0);
  });

  test("a manifest changed while the agent was down replaces its pod", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    await first.kubelet.sync(desired(pod({ name: "web", revision: 1 })));
    const v2 = pod({ name: "web", revision: 2 });
    const second = await restart(clock, runtime, store, first.kubelet, desired(v2));
    await second.advance(1);
    expect(second.kubelet.pods.get(v2.key)!.spec.configHash).toBe(v2.configHash);
    expect(runtime.startsOf("web")).toBe(2);
    expect([...runtime.containers.values()].filter((c) => c.state === "running")).toHaveLength(1);
  });

  test("killed between create and record: the started attempt is adopted, not started twice", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web" });
    await first.kubelet.sync(desired(web));
    // The checkpoint from before the container was recorded: the record still says "not started".
    const stale = JSON.parse(store.records.get(web.key)!) as PodRecord;
    Object.assign(stale.app[0]!, { state: "waiting", containerId: undefined, attempts: 0, restartCount: 0, startedAt: undefined, ready: false, started: false });
    store.records.set(web.key, JSON.stringify(stale));
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    expect(runtime.startsOf("web")).toBe(1);
    expect(second.kubelet.pods.get(web.key)!.app[0]!.state).toBe("running");
    expect(second.events.some((e) => e.reason === "Adopted" && e.message.includes("not recorded"))).toBe(true);
  });

  test("a pod whose sandbox and containers the runtime lost (a reboot took its records) gets a new sandbox and starts again at once, its restart count going on", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web" });
    await first.kubelet.sync(desired(web));
    first.kubelet.stop();
    runtime.containers.clear();
    runtime.sandboxes.clear();
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    const record = second.kubelet.pods.get(web.key)!.app[0]!;
    expect(runtime.sandboxes.size).toBe(1);
    expect(record.state).toBe("running");
    expect(restartCountOf(record)).toBe(1);
    expect(second.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["Exited"]);
  });

  test("a labelled container that nothing explains is stopped and removed", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web" });
    const stray = pod({ name: "stray" });
    await first.kubelet.sync(desired(web, stray));
    store.records.delete(stray.key); // the checkpoint never knew it, and no manifest wants it
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    expect(runtime.running("stray")).toBeUndefined();
    expect([...runtime.containers.values()].map((c) => c.config.container.name)).toEqual(["web"]);
    expect(second.kubelet.pods.has(stray.key)).toBe(false);
  });

  test("probe counters carry on: a liveness probe 2 failures into 3 kills after one more, with no readiness flap", async () => {
    const { clock, runtime, store } = world();
    const prober = new ScriptedProber(runtime, clock);
    const check = { type: "exec" as const, command: ["check"] };
    const web = pod({
      name: "web",
      containers: [container("web", { livenessProbe: probe(check, { periodSeconds: 1, failureThreshold: 3 }), readinessProbe: probe(check, { periodSeconds: 1 }) })],
    });
    const start = clock.now();
    const first = agent(clock, runtime, store, prober);
    await first.kubelet.sync(desired(web));
    await first.advance(0.5);
    expect(first.kubelet.pods.get(web.key)!.app[0]!.ready).toBe(true);
    prober.scripts.set("web/liveness", () => ({ ok: false }));
    await first.advance(2); // failures at 1s and 2s: two of three
    expect(first.events.filter((e) => e.reason === "Unhealthy")).toHaveLength(2);
    const second = await restart(clock, runtime, store, first.kubelet, desired(web), prober);
    expect(second.kubelet.pods.get(web.key)!.app[0]!.ready).toBe(true);
    await second.advance(1.2);
    // One more failure (at 3s, one period after the last) completes the three: the kill follows it.
    const reasons = second.events.map((e) => e.reason);
    const killing = reasons.indexOf("Killing");
    expect(reasons.slice(0, killing).filter((r) => r === "Unhealthy")).toHaveLength(1);
    expect(second.events[killing]!.message).toBe("Container web failed liveness probe, will be restarted");
    expect(second.events[killing]!.at - start).toBe(3000);
    expect(second.events.some((e) => e.reason === "NotReady")).toBe(false);
  });
});
