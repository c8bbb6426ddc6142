import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";

describe("termination", () => {
  test("a removed manifest stops the pod: Killing, then PodRemoved, containers and sandbox removed", async () => {
    const h = harness();
    const web = pod({ grace: 5 });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(1);
    expect(h.lines((e) => ["Killing", "Exited", "PodRemoved"].includes(e.reason))).toEqual([
      "0.0s Killing web",
      "0.0s Exited web exited with code 143 (Error)",
      "0.0s PodRemoved",
    ]);
    expect(h.kubelet.pods.size).toBe(0);
    expect(h.runtime.containers.size).toBe(0);
    expect(h.runtime.sandboxes.size).toBe(0);
  });

  test("a container that ignores SIGTERM is killed at the grace period with exit 137", async () => {
    const h = harness();
    h.runtime.behaviours.set("stubborn", { ignoreSigterm: true });
    const stubborn = pod({ name: "stubborn", grace: 5, containers: [container("stubborn")] });
    await h.kubelet.sync(desired(stubborn));
    const exits: number[] = [];
    h.kubelet.onPodSynced((p) => {
      const t = p.app[0]!.terminated;
      if (t) exits.push(t.exitCode);
    });
    await h.kubelet.sync(desired());
    await h.advance(4.9);
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill stubborn SIGTERM"]);
    await h.advance(0.2);
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill stubborn SIGTERM", "kill stubborn SIGKILL"]);
    expect(h.lines((e) => e.reason === "GraceExpired" || e.reason === "Exited")).toEqual([
      "5.0s GraceExpired stubborn",
      "5.0s Exited stubborn exited with code 137 (Error): killed with SIGKILL when its grace period ran out",
    ]);
    expect(exits).toContain(137);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("the grace period has a 2s floor", async () => {
    const h = harness();
    h.runtime.behaviours.set("stubborn", { ignoreSigterm: true });
    const stubborn = pod({ name: "stubborn", grace: 0, containers: [container("stubborn")] });
    await h.kubelet.sync(desired(stubborn));
    await h.kubelet.sync(desired());
    await h.advance(10);
    expect(h.lines((e) => e.reason === "GraceExpired")).toEqual(["2.0s GraceExpired stubborn"]);
  });

  test("preStop runs first and its time comes out of the grace period", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { ignoreSigterm: true });
    h.runtime.exec = () => ({ exitCode: 0, durationMs: 3000 });
    const web = pod({ grace: 10, containers: [container("web", { preStop: { type: "exec", command: ["sh", "-c", "sleep 3"] } })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(20);
    expect(h.runtime.calls.filter((c) => c.startsWith("exec") || c.startsWith("kill"))).toEqual([
      "exec web sh -c sleep 3",
      "kill web SIGTERM",
      "kill web SIGKILL",
    ]);
    const term = h.events.find((e) => e.reason === "GraceExpired")!;
    expect((term.at - h.events[0]!.at) / 1000).toBe(10);
  });

  test("a preStop hook that overruns the grace gets SIGTERM at the grace and SIGKILL 2s later", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { ignoreSigterm: true });
    h.runtime.exec = () => ({ exitCode: 0, durationMs: 60_000 });
    const web = pod({ grace: 4, containers: [container("web", { preStop: { type: "exec", command: ["sleep", "60"] } })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(20);
    expect(h.lines((e) => e.reason === "GraceExpired" || e.reason === "Exited")).toEqual([
      "6.0s GraceExpired web",
      "6.0s Exited web exited with code 137 (Error): killed with SIGKILL when its grace period ran out",
    ]);
  });

  test("a failing preStop hook is reported in the kubelet's words and the stop goes on", async () => {
    const logs: string[] = [];
    const h = harness({ log: (line) => logs.push(line) });
    h.runtime.exec = () => ({ exitCode: 1, output: "boom" });
    const web = pod({ containers: [container("web", { preStop: { type: "exec", command: ["false"] } })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(1);
    const failed = h.events.find((e) => e.reason === "FailedPreStopHook")!;
    expect(failed.type).toBe("Warning");
    // The kubelet keeps the handler's output out of the event (it may hold secrets) and logs it.
    expect(failed.message).toBe("PreStopHook failed");
    expect(logs.some((line) => line.includes(`Exec lifecycle hook ([false]) for Container "web" in Pod "web-lab_demo(uid-web-1)" failed - error: command 'false' exited with 1: boom, message: "boom"`))).toBe(true);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("a preStop sleep (KEP-3960) waits its seconds before SIGTERM, out of the grace", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { ignoreSigterm: true });
    const web = pod({ grace: 5, containers: [container("web", { preStop: { type: "sleep", seconds: 2 } })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(1.9);
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual([]);
    await h.advance(0.2);
    expect(h.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill web SIGTERM"]);
    // 3s of the grace are left after the sleep: SIGKILL at 5s.
    await h.advance(3);
    expect(h.lines((e) => ["Killing", "GraceExpired", "PodRemoved"].includes(e.reason))).toEqual(["0.0s Killing web", "5.0s GraceExpired web", "5.0s PodRemoved"]);
  });

  test("a preStop sleep of 0 seconds sends SIGTERM at once", async () => {
    const h = harness();
    const web = pod({ grace: 5, containers: [container("web", { preStop: { type: "sleep", seconds: 0 } })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(0.1);
    expect(h.lines((e) => ["Killing", "Exited", "PodRemoved", "FailedPreStopHook"].includes(e.reason))).toEqual(["0.0s Killing web", "0.0s Exited web exited with code 143 (Error)", "0.0s PodRemoved"]);
  });

  test("a changed manifest replaces the pod: the old one stops completely, the new one starts with the new hash", async () => {
    const h = harness();
    const v1 = pod({ revision: 1, grace: 3 });
    const v2 = pod({ revision: 2, grace: 3 });
    h.runtime.behaviours.set("web", (attempt) => ({ termDelayMs: 1000, ...(attempt < 0 ? {} : {}) }));
    await h.kubelet.sync(desired(v1));
    await h.advance(1);
    await h.kubelet.sync(desired(v2));
    const during = h.pod(v2.key)!;
    expect(during.spec.configHash).toBe("hash-web-1");
    expect(during.deletionCause).toBe("replaced");
    await h.advance(2);
    const after = h.pod(v2.key)!;
    expect(after.spec.configHash).toBe("hash-web-2");
    expect(after.app[0]!.state).toBe("running");
    expect(h.lines((e) => ["Killing", "Exited", "Started", "PodRemoved"].includes(e.reason))).toEqual([
      "0.0s Started web",
      "1.0s Killing web",
      "2.0s Exited web exited with code 143 (Error)",
      "2.0s Started web",
    ]);
  });

  test("shutdown stops every pod and resolves when all are gone", async () => {
    const h = harness();
    h.runtime.behaviours.set("slow", { termDelayMs: 1500 });
    await h.kubelet.sync(desired(pod({ name: "a" }), pod({ name: "slow", containers: [container("slow")] })));
    let done = false;
    const shutdown = h.kubelet.shutdown().then(() => (done = true));
    await h.advance(1);
    expect(done).toBe(false);
    await h.advance(1);
    await shutdown;
    expect(done).toBe(true);
    expect(h.runtime.containers.size).toBe(0);
    expect(h.events.filter((e) => e.reason === "PodRemoved")).toEqual([]);
  });

  test("nothing is stopped before the sources are ready", async () => {
    const h = harness();
    await h.kubelet.sync(desired(pod()));
    await h.kubelet.sync(desired(), { sourcesReady: false });
    await h.advance(1);
    expect(h.kubelet.pods.size).toBe(1);
    expect(h.runtime.calls.some((c) => c.startsWith("kill"))).toBe(false);
  });
});
