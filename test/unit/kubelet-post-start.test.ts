/**
 * postStart on the fake runtime and clock: the container is not started (nor Running in its
 * status) until the hook returns, nothing else of the pod starts meanwhile, a failure is
 * FailedPostStartHook then a kill and the restart policy, and a pod stopped under a hook that
 * outlasts its grace is not held by it.
 */
import { describe, expect, test } from "bun:test";
import { podStatus } from "../../src/kubelet/status/pod-status.ts";
import { podPhase } from "../../src/kubelet/status/phase.ts";
import type { ContainerRecord, PodRecord } from "../../src/kubelet/pod-state.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";

const HOOK = ["sh", "-c", "warm-up"];

function statusOf(record: PodRecord, name: string) {
  const status = podStatus(record, { runtimeName: "fake" });
  return [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])].find((c) => c.name === name)!;
}

function appOf(record: PodRecord, name: string): ContainerRecord {
  return record.app.find((c) => c.name === name)!;
}

describe("postStart", () => {
  test("the container is started, and the next one starts, only once the hook has returned", async () => {
    const h = harness();
    h.runtime.exec = (_config, command) => (command.join(" ") === HOOK.join(" ") ? { exitCode: 0, durationMs: 3000 } : { exitCode: 0 });
    const web = pod({ containers: [container("web", { postStart: { type: "exec", command: HOOK } }), container("sidekick")] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    // A pass during the hook (any wake-up) starts nothing either.
    h.kubelet.requestSync(web.key);
    await h.advance(0.5);
    const during = h.pod(web.key)!;
    expect(h.runtime.calls.filter((c) => c.startsWith("start") || c.startsWith("exec"))).toEqual(["start web attempt=0", `exec web ${HOOK.join(" ")}`]);
    expect(statusOf(during, "web")).toMatchObject({ started: false, ready: false, restartCount: 0, state: { waiting: { reason: "ContainerCreating" } } });
    expect(statusOf(during, "web").containerID).toBeUndefined();
    expect(podPhase(during)).toBe("Pending");

    await h.advance(2);
    const after = h.pod(web.key)!;
    expect(h.runtime.calls.filter((c) => c.startsWith("start"))).toEqual(["start web attempt=0", "start sidekick attempt=0"]);
    expect(statusOf(after, "web")).toMatchObject({ started: true, ready: true, restartCount: 0, state: { running: {} } });
    expect(statusOf(after, "web").containerID).toStartWith("fake://");
    expect(podPhase(after)).toBe("Running");
    expect(h.events.some((e) => e.reason === "FailedPostStartHook")).toBe(false);
  });

  test("a sleep hook holds the container for its seconds; probes start after it", async () => {
    let prober!: ScriptedProber;
    const h = harness({ probeRunner: (runtime, clock) => (prober = new ScriptedProber(runtime, clock)) });
    const web = pod({ containers: [container("web", { postStart: { type: "sleep", seconds: 5 }, readinessProbe: probe({ type: "exec", command: ["ready"] }, { periodSeconds: 1 }) })] });
    await h.kubelet.sync(desired(web));
    await h.advance(4.5);
    expect(statusOf(h.pod(web.key)!, "web")).toMatchObject({ started: false, ready: false, state: { waiting: { reason: "ContainerCreating" } } });
    expect(prober.calls.filter((c) => c.key.startsWith("web/"))).toEqual([]);
    await h.advance(2);
    expect(statusOf(h.pod(web.key)!, "web")).toMatchObject({ started: true, ready: true, state: { running: {} } });
    expect(prober.calls.some((c) => c.key.startsWith("web/readiness"))).toBe(true);
  });

  test("a failing hook: FailedPostStartHook, a kill, PostStartHookError, then restarts with back-off", async () => {
    const logs: string[] = [];
    const h = harness({ log: (line) => logs.push(line) });
    h.runtime.behaviours.set("web", { termDelayMs: 1000 });
    h.runtime.exec = () => ({ exitCode: 3, output: "not warm" });
    const web = pod({ grace: 5, containers: [container("web", { postStart: { type: "exec", command: HOOK } })] });
    await h.kubelet.sync(desired(web));
    await h.advance(0.5);
    const failed = h.events.find((e) => e.reason === "FailedPostStartHook")!;
    expect(failed).toMatchObject({ type: "Warning", message: "PostStartHook failed", container: "web" });
    expect(h.events.find((e) => e.reason === "Killing")).toMatchObject({ type: "Normal", message: "FailedPostStartHook" });
    const message = `Exec lifecycle hook ([${HOOK.join(" ")}]) for Container "web" in Pod "web-lab_demo(uid-web-1)" failed - error: command '${HOOK.join(" ")}' exited with 3: not warm, message: "not warm"`;
    // While it is being killed it waits with the kubelet's reason and the handler's message.
    expect(statusOf(h.pod(web.key)!, "web").state).toEqual({ waiting: { reason: "PostStartHookError", message } });
    expect(logs.some((line) => line.endsWith(message))).toBe(true);

    await h.advance(12);
    expect(h.lines((e) => ["Started", "FailedPostStartHook", "Killing", "Exited", "BackOff"].includes(e.reason))).toEqual([
      "0.0s Started web",
      "0.0s FailedPostStartHook web",
      "0.0s Killing web",
      "1.0s Exited web exited with code 143 (Error)",
      // The first restart is at once, as the kubelet's back-off has no entry yet; the second waits 10s.
      "1.0s Started web",
      "1.0s FailedPostStartHook web",
      "1.0s Killing web",
      "2.0s Exited web exited with code 143 (Error)",
      "2.0s BackOff web",
      "12.0s Started web",
      "12.0s FailedPostStartHook web",
      "12.0s Killing web",
    ]);
    const record = h.pod(web.key)!;
    expect(appOf(record, "web").lastTermination).toMatchObject({ exitCode: 143, killCause: "postStart" });
    expect(podPhase(record)).toBe("Running");
  });

  test("under restartPolicy Never a failed hook ends the pod Failed, with no restart", async () => {
    const h = harness();
    h.runtime.exec = () => ({ exitCode: 1 });
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("job", { postStart: { type: "exec", command: HOOK } })] });
    await h.kubelet.sync(desired(job));
    await h.advance(30);
    expect(h.runtime.calls.filter((c) => c.startsWith("start"))).toEqual(["start job attempt=0"]);
    const record = h.pod(job.key)!;
    expect(statusOf(record, "job").state?.terminated).toMatchObject({ exitCode: 143, reason: "Error" });
    expect(record.phase).toBe("Failed");
  });

  test("a pod removed under a hook that outlasts its grace stops within the grace: the hook does not hold it", async () => {
    const h = harness();
    h.runtime.exec = () => ({ exitCode: 0, durationMs: 3_600_000 });
    const web = pod({ grace: 3, containers: [container("web", { postStart: { type: "exec", command: HOOK } })] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    await h.kubelet.sync(desired());
    await h.advance(0.5);
    expect(h.lines((e) => ["Killing", "Exited", "PodRemoved", "FailedPostStartHook"].includes(e.reason))).toEqual([
      "1.0s Killing web",
      "1.0s Exited web exited with code 143 (Error)",
      "1.0s PodRemoved",
    ]);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("a sleep hook is cut short by the pod's stop, and a container that ignores SIGTERM is killed at the grace", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { ignoreSigterm: true });
    const web = pod({ grace: 3, containers: [container("web", { postStart: { type: "sleep", seconds: 600 } })] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    await h.kubelet.sync(desired());
    await h.advance(3.5);
    expect(h.lines((e) => ["Killing", "GraceExpired", "Exited", "PodRemoved"].includes(e.reason))).toEqual([
      "1.0s Killing web",
      "4.0s GraceExpired web",
      "4.0s Exited web exited with code 137 (Error): killed with SIGKILL when its grace period ran out",
      "4.0s PodRemoved",
    ]);
    expect(h.kubelet.pods.size).toBe(0);
  });

  test("a sidecar's hook holds the init containers after it", async () => {
    const h = harness();
    h.runtime.exec = () => ({ exitCode: 0, durationMs: 2000 });
    h.runtime.behaviours.set("init", { exitAfterMs: 100, exitCode: 0 });
    const web = pod({
      init: [container("proxy", { restartPolicy: "Always", postStart: { type: "exec", command: HOOK } }), container("init")],
      containers: [container("web")],
    });
    await h.kubelet.sync(desired(web));
    await h.advance(1.5);
    expect(h.runtime.calls.filter((c) => c.startsWith("start"))).toEqual(["start proxy attempt=0"]);
    expect(statusOf(h.pod(web.key)!, "proxy")).toMatchObject({ started: false, state: { waiting: { reason: "ContainerCreating" } } });
    await h.advance(1);
    expect(h.runtime.calls.filter((c) => c.startsWith("start"))).toEqual(["start proxy attempt=0", "start init attempt=0", "start web attempt=0"]);
  });

  test("an agent restarted under a hook takes the running container as started, without running the hook again", async () => {
    const h = harness();
    h.runtime.exec = () => ({ exitCode: 0, durationMs: 60_000 });
    const web = pod({ containers: [container("web", { postStart: { type: "exec", command: HOOK } })] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    const checkpointed = structuredClone(h.pod(web.key)!);
    expect(checkpointed.app[0]!.postStart).toEqual({ startedAt: expect.any(Number) });

    const { applyPostStart } = await import("../../src/kubelet/lifecycle/post-start.ts");
    const ctx = { log: () => {}, event: () => {} } as never;
    expect(applyPostStart(ctx, checkpointed, checkpointed.app[0]!)).toBe("none");
    expect(checkpointed.app[0]!.postStart).toBeUndefined();
    expect(statusOf(checkpointed, "web")).toMatchObject({ started: true, state: { running: {} } });
  });
});
