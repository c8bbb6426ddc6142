import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

describe("restart policy and CrashLoopBackOff", () => {
  test("first restart is immediate, then base, 2 x base ... up to the cap, measured from the finish", async () => {
    const h = harness({ baseSeconds: 1, capSeconds: 8 });
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    await h.advance(40);
    const starts = h.events.filter((e) => e.reason === "Started").map((e) => (e.at - h.events[0]!.at) / 1000);
    // Runs 1s each; waits 0, 1, 2, 4, 8, 8 ... between a finish and the next start.
    expect(starts.slice(0, 7)).toEqual([0, 1, 3, 6, 11, 20, 29]);
    const backoffs = h.events.filter((e) => e.reason === "BackOff");
    expect(backoffs[0]!.message).toBe("Back-off restarting failed container crash in pod crash-lab");
    // One BackOff event per wait, at the crash that starts the wait: every crash but the first.
    const exits = h.events.filter((e) => e.reason === "Exited");
    expect(backoffs.map((e) => e.at)).toEqual(exits.slice(1).map((e) => e.at));
  });

  test("a crash-looping pod under Always stays Running while its container waits in CrashLoopBackOff", async () => {
    // A wait longer than the pod worker's resync: the exit shows for a minute, then CrashLoopBackOff.
    const h = harness({ baseSeconds: 100 });
    h.runtime.behaviours.set("crash", { exitAfterMs: 100, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    await h.advance(1);
    const ended = h.pod(crash.key)!.app[0]!;
    expect(ended.state).toBe("terminated");
    expect(ended.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(restartCountOf(ended)).toBe(1);
    expect(h.pod(crash.key)!.phase).toBe("Running");
    await h.advance(60);
    const record = h.pod(crash.key)!;
    const c = record.app[0]!;
    expect(c.state).toBe("waiting");
    expect(c.waiting?.reason).toBe("CrashLoopBackOff");
    expect(c.lastTermination?.exitCode).toBe(1);
    expect(c.lastTermination?.reason).toBe("Error");
    expect(restartCountOf(c)).toBe(1);
    expect(record.phase).toBe("Running");
  });

  test("the back-off is forgotten after 2 x cap of clean running", async () => {
    const h = harness({ baseSeconds: 10, capSeconds: 60 });
    let attempt = 0;
    h.runtime.behaviours.set("app", (n) => {
      attempt = n;
      // Three quick crashes, then one long clean run of 121s (> 2 x 60s) before crashing again.
      if (n >= 4) return {};
      return { exitAfterMs: n === 3 ? 121_000 : 100, exitCode: 1 };
    });
    const app = pod({ name: "app", containers: [container("app")] });
    await h.kubelet.sync(desired(app));
    await h.advance(31); // starts at 0, 0.1, 10.2, 30.3
    expect(attempt).toBe(3);
    await h.advance(121.2); // the long run ends; the entry is older than 2 x cap
    const record = h.pod(app.key)!;
    expect(record.app[0]!.state).toBe("running");
    expect(restartCountOf(record.app[0]!)).toBe(4);
    // Restarted at once, with no BackOff: the curve started over.
    const last = h.events.filter((e) => e.reason === "Started").at(-1)!;
    const lastExit = h.events.filter((e) => e.reason === "Exited").at(-1)!;
    expect(last.at).toBe(lastExit.at);
    expect(h.events.filter((e) => e.reason === "BackOff" && e.at >= lastExit.at)).toEqual([]);
  });

  test("OnFailure with exit 0 completes: Succeeded", async () => {
    const h = harness();
    h.runtime.behaviours.set("job", { exitAfterMs: 500, exitCode: 0 });
    const job = pod({ name: "job", restartPolicy: "OnFailure", containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    await h.advance(30);
    const record = h.pod(job.key)!;
    expect(h.runtime.startsOf("job")).toBe(1);
    expect(record.phase).toBe("Succeeded");
    expect(record.app[0]!.terminated?.reason).toBe("Completed");
  });

  test("OnFailure restarts a non-zero exit", async () => {
    const h = harness();
    h.runtime.behaviours.set("job", (n) => ({ exitAfterMs: 500, exitCode: n < 2 ? 1 : 0 }));
    const job = pod({ name: "job", restartPolicy: "OnFailure", containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    await h.advance(60);
    expect(h.runtime.startsOf("job")).toBe(3);
    expect(h.pod(job.key)!.phase).toBe("Succeeded");
  });

  test("Never with a non-zero exit: Failed, no restart", async () => {
    const h = harness();
    h.runtime.behaviours.set("job", { exitAfterMs: 500, exitCode: 2 });
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("job")] });
    await h.kubelet.sync(desired(job));
    await h.advance(60);
    expect(h.runtime.startsOf("job")).toBe(1);
    const record = h.pod(job.key)!;
    expect(record.phase).toBe("Failed");
    expect(record.app[0]!.terminated).toMatchObject({ exitCode: 2, reason: "Error" });
  });

  test("Always restarts a container that exited 0 too", async () => {
    const h = harness();
    h.runtime.behaviours.set("done", { exitAfterMs: 100, exitCode: 0 });
    const done = pod({ name: "done", containers: [container("done")] });
    await h.kubelet.sync(desired(done));
    await h.advance(15);
    expect(h.runtime.startsOf("done")).toBe(3);
    expect(h.pod(done.key)!.phase).toBe("Running");
  });

  test("a start error is a crash: StartError, then back-off", async () => {
    const h = harness();
    h.runtime.behaviours.set("bad", { startError: 'exec: "nope": executable file not found in $PATH' });
    const bad = pod({ name: "bad", containers: [container("bad")] });
    await h.kubelet.sync(desired(bad));
    await h.advance(5);
    // As the kubelet's reasonCache shows a failed start while its back-off runs: RunContainerError.
    const c = h.pod(bad.key)!.app[0]!;
    expect(c.waiting).toEqual({ reason: "RunContainerError", message: 'exec: "nope": executable file not found in $PATH' });
    expect(c.lastTermination).toMatchObject({ exitCode: 128, reason: "StartError" });
    expect(h.events.filter((e) => e.reason === "BackOff")).toHaveLength(1);
    await h.advance(5);
    expect(h.pod(bad.key)!.app[0]!.waiting?.reason).toBe("RunContainerError");
    expect(h.events.some((e) => e.reason === "Failed" && e.message.includes("executable file not found"))).toBe(true);
  });
});

describe("dead containers kept for logs --previous", () => {
  test("one dead container per container: the last one to end (lastState), older ones removed", async () => {
    const h = harness();
    h.runtime.behaviours.set("crash", (n) => (n < 3 ? { exitAfterMs: 100, exitCode: 1 } : {}));
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    await h.advance(11); // attempts 0 and 1 crashed; attempt 2 crashed at 10.2 and waits 20s
    // While the status shows its exit, attempt 2 is the current one, attempt 1 the one kept before it.
    const ended = h.pod(crash.key)!.app[0]!;
    expect(ended.state).toBe("terminated");
    expect(ended.previousContainerId).toBe(ended.lastTermination!.containerId);
    expect([...h.runtime.containers.values()].map((c) => c.config.attempt).sort()).toEqual([1, 2]);
    await h.advance(21); // attempt 3 runs
    const running = h.pod(crash.key)!.app[0]!;
    expect(running.state).toBe("running");
    expect([...h.runtime.containers.values()].map((c) => c.config.attempt).sort()).toEqual([2, 3]);
    expect(running.previousContainerId).toBe(running.lastTermination!.containerId);
  });

  test("the dead container a restart no longer keeps is removed after the new attempt starts, not before it", async () => {
    // A back-off of a millisecond: the pass that ends it both drops the older dead container and starts the next attempt.
    const h = harness({ baseSeconds: 0.001, capSeconds: 0.001 });
    h.runtime.behaviours.set("crash", (n) => (n < 2 ? { exitAfterMs: 100, exitCode: 1 } : {}));
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    await h.advance(1);
    const lifecycle = h.runtime.calls.filter((call) => call.startsWith("start crash") || call.startsWith("remove crash"));
    // As the kubelet's container GC, off the sync: the restart waits for no directory or cgroup to go.
    expect(lifecycle).toEqual(["start crash attempt=0", "start crash attempt=1", "start crash attempt=2", "remove crash"]);
    expect([...h.runtime.containers.values()].map((c) => c.config.attempt).sort()).toEqual([1, 2]);
  });

  test("a failed start keeps the dead container that came before it", async () => {
    const h = harness();
    h.runtime.behaviours.set("app", (n) => (n === 0 ? { exitAfterMs: 100, exitCode: 1 } : n === 1 ? { startError: "no such file" } : {}));
    const app = pod({ name: "app", containers: [container("app")] });
    await h.kubelet.sync(desired(app));
    await h.advance(30);
    const record = h.pod(app.key)!.app[0]!;
    expect(record.state).toBe("running");
    const kept = [...h.runtime.containers.values()].filter((c) => c.state === "exited").map((c) => c.config.attempt);
    expect(kept).toEqual([0]);
    expect(record.previousContainerId).toBe([...h.runtime.containers.values()].find((c) => c.config.attempt === 0)!.id);
  });
});

describe("init containers", () => {
  test("run one at a time, in order, before the app containers", async () => {
    const h = harness();
    h.runtime.behaviours.set("first", { exitAfterMs: 1000, exitCode: 0 });
    h.runtime.behaviours.set("second", { exitAfterMs: 2000, exitCode: 0 });
    const web = pod({ init: [container("first"), container("second")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    expect(h.pod(web.key)!.phase).toBe("Pending");
    await h.advance(5);
    expect(h.lines((e) => e.reason === "Started")).toEqual(["0.0s Started first", "1.0s Started second", "3.0s Started web"]);
    const record = h.pod(web.key)!;
    expect(record.phase).toBe("Running");
    expect(record.initialized).toBe(true);
  });

  test("a failing init container crash-loops and blocks the app: Init:CrashLoopBackOff material", async () => {
    const h = harness();
    h.runtime.behaviours.set("init", { exitAfterMs: 100, exitCode: 1 });
    const web = pod({ init: [container("init")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(135); // the crash at 70.5 waits 80s: its exit shows for a minute, then CrashLoopBackOff
    const record = h.pod(web.key)!;
    expect(record.init[0]!.waiting?.reason).toBe("CrashLoopBackOff");
    expect(restartCountOf(record.init[0]!)).toBeGreaterThanOrEqual(3);
    expect(h.runtime.startsOf("web")).toBe(0);
    expect(record.phase).toBe("Pending");
  });

  test("under Never a failed init container fails the pod", async () => {
    const h = harness();
    h.runtime.behaviours.set("init", { exitAfterMs: 100, exitCode: 1 });
    const web = pod({ restartPolicy: "Never", init: [container("init")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(30);
    const record = h.pod(web.key)!;
    expect(h.runtime.startsOf("init")).toBe(1);
    expect(h.runtime.startsOf("web")).toBe(0);
    expect(record.phase).toBe("Failed");
    expect(record.init[0]!.terminated?.reason).toBe("Error");
  });
});
