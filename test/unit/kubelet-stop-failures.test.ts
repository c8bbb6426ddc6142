import { describe, expect, test } from "bun:test";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import type { FakeRuntime } from "../fake-runtime.ts";

/** Makes the runtime refuse `signal` the next `times` times, as while dockerd restarts. */
function refuseKills(runtime: FakeRuntime, signal: "SIGTERM" | "SIGKILL", times: number): { refused: () => number } {
  const kill = runtime.killContainer.bind(runtime);
  let refused = 0;
  runtime.killContainer = async (id, sent) => {
    if (sent === signal && refused < times) {
      refused++;
      throw new Error("connect ENOENT /var/run/docker.sock");
    }
    return kill(id, sent);
  };
  return { refused: () => refused };
}

describe("a kill the runtime refuses", () => {
  test("a failed SIGKILL is sent again on a pass of its own, until the container is gone", async () => {
    const h = harness();
    h.runtime.behaviours.set("stubborn", { ignoreSigterm: true });
    await h.kubelet.sync(desired(pod({ name: "stubborn", grace: 5, containers: [container("stubborn")] })));
    const kills = refuseKills(h.runtime, "SIGKILL", 2);
    await h.kubelet.sync(desired());
    // Nothing but the loop's own wake-ups drives it from here.
    await h.advance(30);
    expect(kills.refused()).toBe(2);
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill stubborn SIGTERM", "kill stubborn SIGKILL"]);
    expect(h.lines((e) => e.reason === "GraceExpired" || e.reason === "Exited" || e.reason === "PodRemoved")).toEqual([
      "5.0s GraceExpired stubborn",
      expect.stringMatching(/^\d+\.\ds Exited stubborn exited with code 137 \(Error\): killed with SIGKILL when its grace period ran out$/),
      expect.stringMatching(/^\d+\.\ds PodRemoved$/),
    ]);
    expect(h.kubelet.pods.size).toBe(0);
    expect(h.runtime.containers.size).toBe(0);
    // Reported once, not on every try.
    expect(h.events.filter((e) => e.reason === "FailedSync").map((e) => e.message)).toEqual(["error syncing pod: connect ENOENT /var/run/docker.sock"]);
  });

  test("a failed SIGTERM still ends in SIGKILL at the deadline", async () => {
    const h = harness();
    await h.kubelet.sync(desired(pod({ grace: 5 })));
    refuseKills(h.runtime, "SIGTERM", 1);
    await h.kubelet.sync(desired());
    await h.advance(10);
    expect(h.lines((e) => e.reason === "GraceExpired" || e.reason === "Exited")).toEqual(["5.0s GraceExpired web", "5.0s Exited web exited with code 137 (Error): killed with SIGKILL when its grace period ran out"]);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("a preStop hook the runtime cannot run is reported, and SIGTERM follows at once", async () => {
    const h = harness();
    h.runtime.execSync = async () => {
      throw new Error("connect ENOENT /var/run/docker.sock");
    };
    await h.kubelet.sync(desired(pod({ grace: 30, containers: [container("web", { preStop: { type: "exec", command: ["drain"] } })] })));
    await h.kubelet.sync(desired());
    await h.advance(1);
    expect(h.lines((e) => ["FailedPreStopHook", "Exited", "PodRemoved"].includes(e.reason))).toEqual([
      "0.0s FailedPreStopHook web",
      "0.0s Exited web exited with code 143 (Error)",
      "0.0s PodRemoved",
    ]);
  });
});

describe("after stop()", () => {
  test("a preStop hook that completes neither signals the container nor syncs nor arms a timer", async () => {
    const h = harness();
    h.runtime.exec = () => ({ exitCode: 0, durationMs: 3000 });
    await h.kubelet.sync(desired(pod({ grace: 30, containers: [container("web", { preStop: { type: "exec", command: ["drain"] } })] })));
    await h.kubelet.sync(desired());
    h.kubelet.stop();
    const calls = h.runtime.calls.length;
    await h.advance(60);
    expect(h.runtime.calls.slice(calls)).toEqual([]);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  test("a probe that completes does not sync the pod or arm its next run", async () => {
    let scripted!: ScriptedProber;
    const h = harness({ probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)) });
    scripted.scripts.set("web/readiness", () => ({ ok: true, durationMs: 3000 }));
    await h.kubelet.sync(desired(pod({ containers: [container("web", { readinessProbe: probe({ type: "exec", command: ["check"] }, { periodSeconds: 1 }) })] })));
    let syncs = 0;
    h.kubelet.onPodSynced(() => syncs++);
    h.kubelet.stop();
    await h.advance(60);
    expect(syncs).toBe(0);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  test("a pass in flight that fails arms no retry, and queued requests do not run", async () => {
    const h = harness();
    await h.kubelet.sync(desired(pod()));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let passes = 0;
    h.runtime.containerStatus = async () => {
      passes++;
      await gate;
      throw new Error("connect ENOENT /var/run/docker.sock");
    };
    h.kubelet.requestSync("demo/web-lab");
    h.kubelet.requestSync("demo/web-lab");
    h.kubelet.stop();
    h.kubelet.requestSync("demo/web-lab");
    release();
    await h.advance(60);
    // The pass that was running when stop() came ends (and may save); nothing follows it.
    expect(passes).toBe(1);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  test("runtime events and sync() start nothing", async () => {
    const h = harness();
    await h.kubelet.sync(desired(pod()));
    h.kubelet.stop();
    const calls = h.runtime.calls.length;
    h.runtime.finish(h.runtime.running("web")!.id, 1);
    await h.kubelet.sync(desired(pod({ name: "db" })));
    await h.advance(60);
    expect(h.runtime.calls.slice(calls)).toEqual([]);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  test("shutdown() after stop() returns instead of waiting for pods that can no longer be stopped", async () => {
    const h = harness();
    await h.kubelet.sync(desired(pod()));
    h.kubelet.stop();
    let done = false;
    const shutdown = h.kubelet.shutdown().then(() => (done = true));
    await h.advance(60);
    expect(done).toBe(true);
    await shutdown;
    expect(h.runtime.running("web")).toBeDefined();
  });
});
