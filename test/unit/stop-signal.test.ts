/**
 * KEP-4960 in the loop: every graceful stop sends the container's stop signal (the spec's, else
 * the runtime's report, else SIGTERM), SIGKILL still ends the grace, and the status reports it.
 */
import { describe, expect, test } from "bun:test";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { containerStatus } from "../../src/kubelet/status/pod-status.ts";

const kills = (calls: string[]) => calls.filter((c) => c.startsWith("kill"));

describe("stop signals", () => {
  test("a removed pod is stopped with its container's stop signal, and one that handles it exits 0 within its grace", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { exitsOn: "SIGUSR1", termDelayMs: 500 });
    const web = pod({ grace: 5, containers: [container("web", { stopSignal: "SIGUSR1" })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(1);
    expect(kills(h.runtime.calls)).toEqual(["kill web SIGUSR1"]);
    expect(h.lines((e) => e.reason === "Exited")).toEqual(["0.5s Exited web exited with code 0 (Completed)"]);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("a container that does not handle its stop signal is killed by it: 128 + n, the signal recorded", async () => {
    const h = harness();
    const web = pod({ grace: 5, containers: [container("web", { stopSignal: "SIGRTMIN+3" })] });
    await h.kubelet.sync(desired(web));
    let terminated: { exitCode: number; signal?: number } | undefined;
    h.kubelet.onPodSynced((p) => (terminated ??= p.app[0]!.terminated));
    await h.kubelet.sync(desired());
    await h.advance(1);
    expect(kills(h.runtime.calls)).toEqual(["kill web SIGRTMIN+3"]);
    expect(terminated).toMatchObject({ exitCode: 128 + 37, signal: 37 });
  });

  test("one that ignores its stop signal still gets SIGKILL when the grace runs out", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { exitsOn: "SIGUSR1" });
    const web = pod({ grace: 3, containers: [container("web", { stopSignal: "SIGQUIT" })] });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(10);
    expect(kills(h.runtime.calls)).toEqual(["kill web SIGQUIT", "kill web SIGKILL"]);
    expect(h.lines((e) => e.reason === "GraceExpired")).toEqual(["3.0s GraceExpired web"]);
  });

  test("a liveness failure kills with the stop signal before the restart", async () => {
    let scripted!: ScriptedProber;
    const h = harness({ probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)) });
    h.runtime.behaviours.set("web", { exitsOn: "SIGUSR2" });
    const livenessProbe = probe({ type: "exec", command: ["check"] }, { periodSeconds: 1, failureThreshold: 1 });
    const web = pod({ grace: 5, containers: [container("web", { stopSignal: "SIGUSR2", livenessProbe })] });
    await h.kubelet.sync(desired(web));
    scripted.scripts.set("web/liveness", (call) => ({ ok: call > 0 }));
    await h.advance(1.5);
    expect(kills(h.runtime.calls)).toEqual(["kill web SIGUSR2"]);
    expect(h.lines((e) => e.reason === "Exited")).toEqual(["0.0s Exited web exited with code 0 (Completed) after failing its liveness probe"]);
    expect(h.runtime.startsOf("web")).toBe(2);
  });

  test("the agent's shutdown (--stop-pods-on-exit) sends each container's own stop signal", async () => {
    const h = harness();
    h.runtime.behaviours.set("a", { exitsOn: "SIGINT" });
    await h.kubelet.sync(desired(pod({ name: "a", containers: [container("a", { stopSignal: "SIGINT" })] }), pod({ name: "b" })));
    const shutdown = h.kubelet.shutdown();
    await h.advance(1);
    await shutdown;
    expect(kills(h.runtime.calls).sort()).toEqual(["kill a SIGINT", "kill b SIGTERM"]);
  });

  test("without a spec signal the runtime's (an image's STOPSIGNAL) is sent; the spec's wins over it", async () => {
    const h = harness();
    h.runtime.behaviours.set("img", { reportedStopSignal: "SIGQUIT" });
    h.runtime.behaviours.set("spec", { reportedStopSignal: "SIGQUIT" });
    const img = pod({ name: "img", containers: [container("img")] });
    const spec = pod({ name: "spec", containers: [container("spec", { stopSignal: "SIGHUP" })] });
    await h.kubelet.sync(desired(img, spec));
    await h.advance(0.5);
    await h.kubelet.sync(desired());
    await h.advance(1);
    expect(kills(h.runtime.calls).sort()).toEqual(["kill img SIGQUIT", "kill spec SIGHUP"]);
  });

  test("containerStatuses[].stopSignal: the effective signal once an attempt exists, SIGTERM by default", async () => {
    const h = harness();
    h.runtime.behaviours.set("img", { reportedStopSignal: "SIGWINCH" });
    const p = pod({ containers: [container("plain"), container("usr1", { stopSignal: "SIGUSR1" }), container("img")] });
    await h.kubelet.sync(desired(p));
    // The runtime's report is read on the pass after the start, as the PLEG's started event brings one.
    await h.kubelet.sync(desired(p));
    const statuses = h.pod(p.key)!.app.map((c) => containerStatus(c, "fake").stopSignal);
    expect(statuses).toEqual(["SIGTERM", "SIGUSR1", "SIGWINCH"]);
    const waiting = h.pod(p.key)!.app[0]!;
    expect(containerStatus({ name: waiting.name, kind: waiting.kind, spec: waiting.spec, attempts: waiting.attempts, stopSignal: waiting.stopSignal, state: "waiting", ready: false, started: false }, "fake").stopSignal).toBeUndefined();
  });
});
