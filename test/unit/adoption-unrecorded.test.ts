/**
 * Issue 11, "a container must never run twice": the agent is killed the moment it reports
 * `Started`, before that pass is checkpointed, and the container exits while no agent runs. The
 * next agent takes the attempt over from the runtime's labels, records its exit, and applies the
 * restart policy to it; it never starts that attempt again.
 */
import { describe, expect, test } from "bun:test";
import { agent, killOnStarted, restart, world } from "../adoption-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import { counted } from "../kubelet-harness.ts";

describe("an attempt started but not checkpointed when the agent died", () => {
  test("restartPolicy Never, pod never checkpointed, exited while down: recorded, not run again", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("job")] });
    killOnStarted(first, store, "job");
    await first.kubelet.sync(desired(job));
    expect(store.records.has(job.key)).toBe(false);
    clock.stepSeconds(2);
    const id = runtime.running("job")!.id;
    runtime.finish(id, 3);
    clock.stepSeconds(3);
    const second = await restart(clock, runtime, store, first.kubelet, desired(job));
    await second.advance(60);
    expect(runtime.startsOf("job")).toBe(1);
    const record = second.kubelet.pods.get(job.key)!;
    expect(record.phase).toBe("Failed");
    expect(counted(record.app[0]!)).toMatchObject({ state: "terminated", containerId: id, restartCount: 0, attempts: 1 });
    expect(record.app[0]!.terminated).toMatchObject({ exitCode: 3, reason: "Error", finishedAt: clock.now() - 63_000 });
    expect(second.events.find((e) => e.reason === "Exited")?.message).toBe("Container job exited with code 3 (Error)");
    // Its output stays readable: the attempt is the pod's, not an orphan to remove.
    expect(runtime.containers.has(id)).toBe(true);
    expect(JSON.parse(store.records.get(job.key)!).app[0].terminated.exitCode).toBe(3);
  });

  test("restartPolicy OnFailure, exited 0 while down: the job is done, not run again", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const job = pod({ name: "job", restartPolicy: "OnFailure", containers: [container("job")] });
    killOnStarted(first, store, "job");
    await first.kubelet.sync(desired(job));
    runtime.finish(runtime.running("job")!.id, 0);
    const second = await restart(clock, runtime, store, first.kubelet, desired(job));
    await second.advance(60);
    expect(runtime.startsOf("job")).toBe(1);
    expect(second.kubelet.pods.get(job.key)!.phase).toBe("Succeeded");
  });

  test("listed as created (its start still in flight when the agent died): holds its number, removed, the next start is attempt 1", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web", containers: [container("web")] });
    killOnStarted(first, store, "web");
    await first.kubelet.sync(desired(web));
    // A loaded engine lists the container as created while it is still carrying out the dead agent's start.
    const id = runtime.running("web")!.id;
    runtime.containers.get(id)!.state = "created";
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    await second.advance(5);
    expect(runtime.containers.has(id)).toBe(false);
    const attempts = [...runtime.containers.values()].filter((c) => c.config.container.name === "web").map((c) => c.config.attempt);
    expect(attempts).toEqual([1]);
    const record = second.kubelet.pods.get(web.key)!;
    expect(counted(record.app[0]!)).toMatchObject({ state: "running", containerId: runtime.running("web")!.id, restartCount: 1, attempts: 2 });
    expect(record.app[0]!.lastTermination).toMatchObject({ containerId: id, exitCode: 137, reason: "ContainerStatusUnknown" });
  });

  test("still running at the restart, pod never checkpointed: adopted as it runs", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web", containers: [container("web")] });
    killOnStarted(first, store, "web");
    await first.kubelet.sync(desired(web));
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    await second.advance(5);
    expect(runtime.startsOf("web")).toBe(1);
    expect(counted(second.kubelet.pods.get(web.key)!.app[0]!)).toMatchObject({ state: "running", containerId: runtime.running("web")!.id, restartCount: 0 });
  });

  test("a crash loop keeps every run: the unrecorded attempt's exit, the count, and the back-off curve", async () => {
    const { clock, runtime, store } = world();
    runtime.behaviours.set("crash", { exitAfterMs: 100, exitCode: 1 });
    const first = agent(clock, runtime, store);
    const crash = pod({ name: "crash", containers: [container("crash")] });
    const start = clock.now();
    killOnStarted(first, store, "crash", 3); // attempt 2, at 10.2s after a 10s back-off
    await first.kubelet.sync(desired(crash));
    await first.advance(12); // attempt 2 exits at 10.3s, nobody listening
    const third = [...runtime.containers.values()].find((c) => c.config.attempt === 2)!;
    expect(third.state).toBe("exited");
    const second = await restart(clock, runtime, store, first.kubelet, desired(crash));
    const record = () => second.kubelet.pods.get(crash.key)!.app[0]!;
    expect(counted(record())).toMatchObject({ restartCount: 2, attempts: 3 });
    // Its exit is what the status shows while the back-off it starts runs.
    expect(record().terminated).toMatchObject({ containerId: third.id, exitCode: 1, finishedAt: start + 10_300 });
    // The wait after the third crash is 20s from its finish (10.3s): no start before 30.3s.
    await second.advance(18);
    expect(runtime.startsOf("crash")).toBe(3);
    // Meanwhile the third run, whose exit is shown, is what `logs` reads; after the restart, `logs --previous`.
    expect(record().containerId).toBe(third.id);
    expect(runtime.containers.has(third.id)).toBe(true);
    await second.advance(1);
    expect(record().previousContainerId).toBe(third.id);
    expect(runtime.calls.filter((c) => c.startsWith("start crash"))).toEqual([
      "start crash attempt=0",
      "start crash attempt=1",
      "start crash attempt=2",
      "start crash attempt=3",
    ]);
    expect(restartCountOf(record())).toBe(3);
  });

  test("the checkpoint has the previous attempt running: its exit and the new attempt are both recorded", async () => {
    const { clock, runtime, store } = world();
    runtime.behaviours.set("crash", (attempt) => (attempt === 0 ? { exitAfterMs: 100, exitCode: 4 } : {}));
    const first = agent(clock, runtime, store);
    const crash = pod({ name: "crash", containers: [container("crash")] });
    killOnStarted(first, store, "crash", 2); // the restart at 0.1s: the checkpoint still has attempt 0 running
    await first.kubelet.sync(desired(crash));
    await first.advance(1);
    expect(JSON.parse(store.records.get(crash.key)!).app[0].state).toBe("running");
    const second = await restart(clock, runtime, store, first.kubelet, desired(crash));
    await second.advance(30);
    const record = second.kubelet.pods.get(crash.key)!.app[0]!;
    expect(runtime.startsOf("crash")).toBe(2);
    expect(counted(record)).toMatchObject({ state: "running", containerId: runtime.running("crash")!.id, restartCount: 1, attempts: 2 });
    expect(record.lastTermination).toMatchObject({ exitCode: 4 });
  });

  test("the sandbox made in the pass the checkpoint missed stays with its pod, with the container adopted in it", async () => {
    const { clock, runtime, store } = world();
    const realSandbox = runtime.runPodSandbox.bind(runtime);
    let failures = 1;
    runtime.runPodSandbox = async (spec) => {
      if (failures-- > 0) throw new Error("sandbox image missing");
      return realSandbox(spec);
    };
    const first = agent(clock, runtime, store);
    const web = pod({ name: "web", containers: [container("web")] });
    killOnStarted(first, store, "web");
    await first.kubelet.sync(desired(web));
    await first.advance(6); // the retry 5s later makes the sandbox and starts web; that pass is lost
    expect(JSON.parse(store.records.get(web.key)!).sandbox).toBeUndefined();
    const second = await restart(clock, runtime, store, first.kubelet, desired(web));
    await second.advance(5);
    expect(runtime.calls.filter((c) => c.startsWith("remove"))).toEqual([]);
    expect(runtime.startsOf("web")).toBe(1);
    expect(second.kubelet.pods.get(web.key)!.sandbox?.id).toBe([...runtime.sandboxes.keys()][0]!);
  });

  test("an older attempt of a known container, left behind, is removed as superseded; the kept ones stay", async () => {
    const { clock, runtime, store } = world();
    runtime.behaviours.set("crash", { exitAfterMs: 100, exitCode: 1 });
    const first = agent(clock, runtime, store);
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await first.kubelet.sync(desired(crash));
    await first.advance(12); // attempts 0, 1, 2; 0 was removed when 1 became the kept dead one; 2's exit is shown
    const record = first.kubelet.pods.get(crash.key)!.app[0]!;
    const shown = record.containerId;
    // An attempt-0 container still on the runtime, as if that removal had been cut short by a kill.
    const stale = await runtime.startContainer({ pod: crash, container: crash.containers[0]!, kind: "app", attempt: 0, sandbox: first.kubelet.pods.get(crash.key)!.sandbox! });
    runtime.finish(stale, 1);
    const second = await restart(clock, runtime, store, first.kubelet, desired(crash));
    expect(runtime.containers.has(stale)).toBe(false);
    // The pass after the restart moves on to CrashLoopBackOff: attempt 2 is kept in place of attempt 1.
    expect(second.kubelet.pods.get(crash.key)!.app[0]!.previousContainerId).toBe(shown);
    expect(runtime.containers.has(shown!)).toBe(true);
    expect(restartCountOf(second.kubelet.pods.get(crash.key)!.app[0]!)).toBe(2);
  });

  test("a pod never checkpointed whose manifest is gone: nothing explains its container, which is removed", async () => {
    const { clock, runtime, store } = world();
    const first = agent(clock, runtime, store);
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("job")] });
    killOnStarted(first, store, "job");
    await first.kubelet.sync(desired(job));
    runtime.finish(runtime.running("job")!.id, 0);
    const second = await restart(clock, runtime, store, first.kubelet, desired());
    await second.advance(5);
    expect(runtime.containers.size).toBe(0);
    expect(second.kubelet.pods.size).toBe(0);
  });
});
