/**
 * The runtime acting behind the loop's back (issue 7): `docker restart` of a container (same id,
 * exit seen or not), a sandbox that died while the runtime was away, and the runtime going away.
 * The decisions are documented in src/kubelet/runtime-restarts.ts and sandbox-check.ts.
 */
import { describe, expect, test } from "bun:test";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import { counted } from "../kubelet-harness.ts";

const ready = { readinessProbe: probe({ type: "exec" as const, command: ["check"] }, { initialDelaySeconds: 1, periodSeconds: 1 }) };

function setup(options: { baseSeconds?: number } = {}) {
  const h = harness({ baseSeconds: options.baseSeconds ?? 10, probeRunner: (runtime, clock) => new ScriptedProber(runtime, clock) });
  const web = pod({ name: "web", containers: [container("web", ready)] });
  return { h, web, record: () => h.pod(web.key)!.app[0]!, running: () => [...h.runtime.containers.values()].filter((c) => c.state === "running") };
}

describe("a container restarted by the runtime (docker restart)", () => {
  test("exit not seen: same container, count unchanged, a Restarted warning, ready again after the probe", async () => {
    const t = setup();
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(10);
    const id = t.record().containerId!;
    expect(t.record().ready).toBe(true);

    t.h.runtime.restartInPlace(id, { quietly: true });
    t.h.runtime.emit({ type: "started", containerId: id });
    await t.h.kubelet.idle();
    expect(counted(t.record())).toMatchObject({ containerId: id, state: "running", restartCount: 0, ready: false, startedAt: t.h.clock.now() });
    expect(t.h.lines((e) => e.reason === "Restarted")).toEqual(["10.0s Restarted web"]);
    expect(t.h.events.find((e) => e.reason === "Restarted")!.message).toContain("restarted by the fake runtime, not by the kubelet");

    await t.h.advance(1.5);
    expect(t.record().ready).toBe(true);
    expect(t.h.runtime.startsOf("web")).toBe(1);
    // A real crash later is handled as always: counted, restarted by the loop.
    t.h.runtime.finish(id, 1);
    await t.h.advance(0.1);
    expect(counted(t.record())).toMatchObject({ state: "running", restartCount: 1 });
    expect(t.running().map((c) => c.id)).toEqual([t.record().containerId!]);
  });

  test("exit seen first: counted like a crash, restarted by the loop, the revived old attempt is killed", async () => {
    const t = setup();
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(10);
    const old = t.record().containerId!;
    t.h.runtime.finish(old, 137, 9);
    await t.h.kubelet.idle();
    const current = t.record().containerId!;
    expect(current).not.toBe(old);
    expect(restartCountOf(t.record())).toBe(1);

    t.h.runtime.restartInPlace(old); // docker brings the old id back after the loop acted
    await t.h.kubelet.idle();
    expect(t.running().map((c) => c.id)).toEqual([current]);
    expect(t.h.runtime.calls).toContain("kill web SIGKILL");
    expect(counted(t.record())).toMatchObject({ containerId: current, state: "running", restartCount: 1, previousContainerId: old });
    expect(t.h.lines((e) => ["Exited", "Started", "Killing"].includes(e.reason))).toEqual([
      "0.0s Started web",
      "10.0s Exited web exited with code 137 (Error)",
      "10.0s Started web",
      "10.0s Killing web",
    ]);
    await t.h.advance(2);
    expect(counted(t.record())).toMatchObject({ containerId: current, state: "running", ready: true, restartCount: 1 });
  });

  test("revived while waiting in back-off: killed, and the loop's own restart comes at the end of the wait", async () => {
    const t = setup({ baseSeconds: 10 });
    await t.h.kubelet.sync(desired(t.web));
    t.h.runtime.finish(t.record().containerId!, 1); // first restart: immediate
    await t.h.kubelet.idle();
    const second = t.record().containerId!;
    t.h.runtime.finish(second, 1); // second: 10s back-off
    await t.h.kubelet.idle();
    expect(t.record().state).toBe("terminated");

    t.h.runtime.restartInPlace(second);
    await t.h.kubelet.idle();
    expect(t.running()).toEqual([]);
    expect(counted(t.record())).toMatchObject({ state: "waiting", restartCount: 1 });
    await t.h.advance(10);
    expect(t.running().map((c) => c.id)).toEqual([t.record().containerId!]);
    expect(restartCountOf(t.record())).toBe(2);
  });
});

describe("the runtime going away and coming back", () => {
  test("in a re-created sandbox the init containers run again, in order, before the app restarts", async () => {
    const h = harness();
    h.runtime.behaviours.set("setup", { exitAfterMs: 500, exitCode: 0 });
    const web = pod({ name: "web", init: [container("setup")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(2);
    const oldSandbox = h.pod(web.key)!.sandbox!.id;
    h.runtime.sandboxes.delete(oldSandbox);
    h.runtime.emit({ type: "health", healthy: true, message: "docker events stream reconnected" });
    await h.kubelet.idle();
    const during = h.pod(web.key)!;
    expect(during.initialized).toBe(false);
    expect(during.phase).toBe("Pending");
    await h.advance(2);
    expect(h.lines((e) => ["SandboxChanged", "Killing", "Exited", "Started"].includes(e.reason))).toEqual([
      "0.0s Started setup",
      "0.5s Exited setup exited with code 0 (Completed)",
      "0.5s Started web",
      "2.0s SandboxChanged",
      "2.0s Killing web",
      "2.0s Started setup",
      "2.0s Exited web exited with code 137 (Error)",
      "2.5s Exited setup exited with code 0 (Completed)",
      "2.5s Started web",
    ]);
    const after = h.pod(web.key)!;
    expect(after.phase).toBe("Running");
    expect(restartCountOf(after.init[0]!)).toBe(1);
    expect(restartCountOf(after.app[0]!)).toBe(1);
    expect(h.runtime.running("web")!.config.sandbox.id).toBe(after.sandbox!.id);
  });

  test("a pod under restartPolicy Never gets no new sandbox: what ran is stopped and the pod fails", async () => {
    const h = harness();
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    const oldSandbox = h.pod(job.key)!.sandbox!.id;
    h.runtime.sandboxes.delete(oldSandbox);
    h.runtime.emit({ type: "health", healthy: true, message: "docker events stream reconnected" });
    await h.advance(1);
    const record = h.pod(job.key)!;
    expect(record.sandbox!.id).toBe(oldSandbox);
    expect(h.runtime.startsOf("job")).toBe(1);
    expect(record.phase).toBe("Failed");
    expect(h.events.find((e) => e.reason === "Killing")!.message).toBe("Stopping container job: its pod sandbox died and restartPolicy is Never");
  });

  test("a dead sandbox is re-created when the runtime is healthy again; containers restart inside the new one", async () => {
    const t = setup();
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(5);
    const oldSandbox = t.h.pod(t.web.key)!.sandbox!.id;
    // dockerd restarted without live-restore: every container stopped, events lost meanwhile.
    t.h.runtime.sandboxes.delete(oldSandbox);
    const old = t.h.runtime.containers.get(t.record().containerId!)!;
    Object.assign(old, { state: "exited", exitCode: 143, finishedAt: t.h.clock.now() });
    t.h.runtime.emit({ type: "health", healthy: true, message: "docker events stream reconnected" });
    await t.h.kubelet.idle();

    const sandbox = t.h.pod(t.web.key)!.sandbox!;
    expect(sandbox.id).not.toBe(oldSandbox);
    expect([...t.h.runtime.sandboxes.keys()]).toEqual([sandbox.id]);
    const running = t.running();
    expect(running.map((c) => c.config.sandbox.id)).toEqual([sandbox.id]);
    expect(counted(t.record())).toMatchObject({ state: "running", restartCount: 1, containerId: running[0]!.id });
    expect(t.h.lines((e) => ["SandboxChanged", "Exited", "Started"].includes(e.reason)).slice(1)).toEqual([
      "5.0s Exited web exited with code 143 (Error)",
      "5.0s SandboxChanged",
      "5.0s Started web",
    ]);
  });

  test("a sandbox that dies while containers run: they are killed and started again in a new sandbox", async () => {
    const t = setup();
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(5);
    const oldSandbox = t.h.pod(t.web.key)!.sandbox!.id;
    const first = t.record().containerId!;
    t.h.runtime.sandboxes.delete(oldSandbox);
    t.h.runtime.emit({ type: "exited", containerId: oldSandbox });
    await t.h.kubelet.idle();
    await t.h.advance(0.1);
    expect(t.running().map((c) => c.config.sandbox.id)).toEqual([t.h.pod(t.web.key)!.sandbox!.id]);
    expect(t.running().map((c) => c.id)).not.toContain(first);
    expect(t.h.runtime.containers.get(first)!.exitCode).toBe(137);
  });

  test("unhealthy: every pod syncs at once, so a failing runtime shows as one FailedSync, retried from 2s on", async () => {
    const t = setup();
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(1);
    const status = t.h.runtime.containerStatus.bind(t.h.runtime);
    let tries = 0;
    t.h.runtime.containerStatus = async () => {
      tries++;
      throw new Error("connect ENOENT /var/run/docker.sock");
    };
    t.h.runtime.emit({ type: "health", healthy: false, message: "docker events stream ended" });
    await t.h.kubelet.idle();
    const failed = t.h.events.filter((e) => e.reason === "FailedSync");
    expect(failed.map((e) => e.message)).toEqual(["error syncing pod: connect ENOENT /var/run/docker.sock"]);
    await t.h.advance(2);
    expect(tries).toBe(2);
    expect(t.h.events.filter((e) => e.reason === "FailedSync").length).toBe(1);

    t.h.runtime.containerStatus = status;
    t.h.runtime.emit({ type: "health", healthy: true, message: "docker events stream reconnected" });
    await t.h.advance(2);
    expect(t.h.events.filter((e) => e.reason === "FailedSync").length).toBe(1);
    expect(counted(t.record())).toMatchObject({ state: "running", restartCount: 0, ready: true });
  });

  test("a container that cannot start makes the loop look at its sandbox, which is re-created when dead", async () => {
    const t = setup({ baseSeconds: 1 });
    await t.h.kubelet.sync(desired(t.web));
    await t.h.advance(5);
    const oldSandbox = t.h.pod(t.web.key)!.sandbox!.id;
    // The sandbox died unnoticed (its event lost); the next start fails, as joining it would.
    t.h.runtime.sandboxes.delete(oldSandbox);
    t.h.runtime.behaviours.set("web", (attempt) => (attempt === 1 ? { startError: "cannot join network of a non running container" } : {}));
    t.h.runtime.finish(t.record().containerId!, 1);
    await t.h.advance(3);
    const sandbox = t.h.pod(t.web.key)!.sandbox!;
    expect(sandbox.id).not.toBe(oldSandbox);
    expect(t.running().map((c) => c.config.sandbox.id)).toEqual([sandbox.id]);
    expect(t.h.lines((e) => ["Failed", "SandboxChanged", "Started"].includes(e.reason)).slice(1)).toEqual([
      "5.0s Failed web",
      "5.0s SandboxChanged",
      "6.0s Started web",
    ]);
  });
});
