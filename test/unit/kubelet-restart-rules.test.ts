/**
 * Container restart rules (KEP-5307) in the loop, with the fake runtime and the fake clock: the
 * first matching rule restarts (with the usual back-off), else the container's own policy, else
 * the pod's; the phase follows what each container will do; sidecars are untouched.
 */
import { describe, expect, test } from "bun:test";
import type { ContainerRestartRule } from "../../src/manifest/types.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { restartDecision } from "../../src/kubelet/restart-policy.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

const inCodes = (...values: number[]): ContainerRestartRule => ({ action: "Restart", exitCodes: { operator: "In", values } });
const notIn = (...values: number[]): ContainerRestartRule => ({ action: "Restart", exitCodes: { operator: "NotIn", values } });

describe("restartDecision (ContainerShouldRestart)", () => {
  const cases: { name: string; pod: "Always" | "OnFailure" | "Never"; spec: Parameters<typeof restartDecision>[2]; code: number; restart: boolean; by: string }[] = [
    { name: "In matches", pod: "Never", spec: { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] }, code: 42, restart: true, by: "rule 0" },
    { name: "In misses: the container's Never", pod: "Never", spec: { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] }, code: 1, restart: false, by: "container Never" },
    { name: "NotIn matches a code outside the set", pod: "Never", spec: { restartPolicy: "Never", restartPolicyRules: [notIn(0, 1)] }, code: 99, restart: true, by: "rule 0" },
    { name: "NotIn misses a code in the set", pod: "Always", spec: { restartPolicy: "Never", restartPolicyRules: [notIn(0, 1)] }, code: 1, restart: false, by: "container Never" },
    { name: "an empty NotIn matches every code", pod: "Never", spec: { restartPolicy: "Never", restartPolicyRules: [notIn()] }, code: 0, restart: true, by: "rule 0" },
    { name: "the first matching rule decides", pod: "Never", spec: { restartPolicy: "Never", restartPolicyRules: [inCodes(1), inCodes(42), notIn()] }, code: 42, restart: true, by: "rule 1" },
    { name: "the container's OnFailure overrides the pod's Never", pod: "Never", spec: { restartPolicy: "OnFailure" }, code: 3, restart: true, by: "container OnFailure" },
    { name: "the container's Never overrides the pod's Always", pod: "Always", spec: { restartPolicy: "Never" }, code: 0, restart: false, by: "container Never" },
    { name: "no policy of its own: the pod's", pod: "OnFailure", spec: {}, code: 0, restart: false, by: "pod OnFailure" },
    // The API refuses rules without a policy; a record that had them anyway is read as the kubelet reads it.
    { name: "rules without a policy are not read", pod: "Never", spec: { restartPolicyRules: [inCodes(42)] }, code: 42, restart: false, by: "pod Never" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const decision = restartDecision(c.pod, "app", c.spec, c.code);
      const d = decision.decider;
      const by = d.by === "rule" ? `rule ${d.index}` : d.by === "sidecar" ? "sidecar" : `${d.by} ${d.policy}`;
      expect({ restart: decision.restart, by }).toEqual({ restart: c.restart, by: c.by });
    });
  }

  test("a sidecar restarts whatever its exit", () => {
    expect(restartDecision("Never", "sidecar", { restartPolicy: "Always" }, 0)).toEqual({ restart: true, decider: { by: "sidecar" } });
  });
});

describe("restart rules in the loop", () => {
  test("under pod Never, In [42]: an exit 42 is restarted with back-off, the pod stays Running; then an exit 1 stops it for good and the pod fails", async () => {
    const h = harness({ baseSeconds: 10, capSeconds: 300 });
    // Three exits of 42, then exit 1.
    h.runtime.behaviours.set("worker", (n) => ({ exitAfterMs: 1000, exitCode: n < 3 ? 42 : 1 }));
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("worker", { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] })] });
    await h.kubelet.sync(desired(job));
    await h.advance(2.5);
    const record = h.pod(job.key)!;
    // The first restart is immediate, the second waits the base back-off, the exit shown meanwhile.
    expect(record.app[0]!.state).toBe("terminated");
    expect(record.app[0]!.terminated?.exitCode).toBe(42);
    expect(record.phase).toBe("Running");
    await h.advance(60);
    const starts = h.events.filter((e) => e.reason === "Started").map((e) => (e.at - h.events[0]!.at) / 1000);
    // Runs 1s each; waits 0, then 10, then 20.
    expect(starts).toEqual([0, 1, 12, 33]);
    expect(h.lines((e) => e.reason === "BackOff")).toHaveLength(2);
    const done = h.pod(job.key)!;
    expect(h.runtime.startsOf("worker")).toBe(4);
    expect(restartCountOf(done.app[0]!)).toBe(3);
    expect(done.app[0]!.state).toBe("terminated");
    expect(done.app[0]!.terminated?.exitCode).toBe(1);
    expect(done.phase).toBe("Failed");
  });

  test("under pod Never, In [42]: a first exit 1 is not restarted", async () => {
    const h = harness();
    h.runtime.behaviours.set("worker", { exitAfterMs: 500, exitCode: 1 });
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("worker", { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] })] });
    await h.kubelet.sync(desired(job));
    await h.advance(60);
    expect(h.runtime.startsOf("worker")).toBe(1);
    expect(h.pod(job.key)!.phase).toBe("Failed");
    expect(h.events.filter((e) => e.reason === "BackOff")).toEqual([]);
  });

  test("NotIn [0]: every failure restarts, a clean exit completes the pod", async () => {
    const h = harness();
    h.runtime.behaviours.set("worker", (n) => ({ exitAfterMs: 500, exitCode: n < 2 ? 7 : 0 }));
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("worker", { restartPolicy: "Never", restartPolicyRules: [notIn(0)] })] });
    await h.kubelet.sync(desired(job));
    await h.advance(60);
    expect(h.runtime.startsOf("worker")).toBe(3);
    expect(h.pod(job.key)!.phase).toBe("Succeeded");
  });

  test("a container's own Never under pod Always: it stays down while its neighbour restarts; the pod stays Running", async () => {
    const h = harness();
    h.runtime.behaviours.set("once", { exitAfterMs: 500, exitCode: 3 });
    h.runtime.behaviours.set("loop", { exitAfterMs: 500, exitCode: 0 });
    const web = pod({ name: "web", containers: [container("once", { restartPolicy: "Never" }), container("loop")] });
    await h.kubelet.sync(desired(web));
    await h.advance(30);
    expect(h.runtime.startsOf("once")).toBe(1);
    expect(h.runtime.startsOf("loop")).toBeGreaterThan(2);
    expect(h.pod(web.key)!.phase).toBe("Running");
  });

  test("under pod Always, every container stopped for good by its own policy: the pod ends (Failed on a failure, Succeeded when all exited 0)", async () => {
    const h = harness();
    h.runtime.behaviours.set("a", { exitAfterMs: 500, exitCode: 0 });
    h.runtime.behaviours.set("b", { exitAfterMs: 800, exitCode: 2 });
    const failed = pod({ name: "failed", containers: [container("a", { restartPolicy: "Never" }), container("b", { restartPolicy: "Never", restartPolicyRules: [notIn(2)] })] });
    h.runtime.behaviours.set("c", { exitAfterMs: 500, exitCode: 0 });
    const succeeded = pod({ name: "succeeded", containers: [container("c", { restartPolicy: "OnFailure" })] });
    await h.kubelet.sync(desired(failed, succeeded));
    await h.advance(30);
    // b's exit 2 is the one code its NotIn rule leaves to its own Never.
    expect([h.runtime.startsOf("a"), h.runtime.startsOf("b")]).toEqual([1, 1]);
    expect(h.pod(failed.key)!.phase).toBe("Failed");
    expect(h.runtime.startsOf("c")).toBe(1);
    expect(h.pod(succeeded.key)!.phase).toBe("Succeeded");
  });

  test("the container's OnFailure overrides the pod's Never", async () => {
    const h = harness();
    h.runtime.behaviours.set("worker", (n) => ({ exitAfterMs: 500, exitCode: n < 1 ? 5 : 0 }));
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("worker", { restartPolicy: "OnFailure" })] });
    await h.kubelet.sync(desired(job));
    await h.advance(30);
    expect(h.runtime.startsOf("worker")).toBe(2);
    expect(h.pod(job.key)!.phase).toBe("Succeeded");
  });

  test("an init container's rule restarts it under pod Never; a code no rule names fails the pod", async () => {
    const h = harness();
    h.runtime.behaviours.set("setup", (n) => ({ exitAfterMs: 300, exitCode: n < 1 ? 3 : 0 }));
    const ok = pod({ name: "ok", restartPolicy: "Never", init: [container("setup", { restartPolicy: "Never", restartPolicyRules: [inCodes(3)] })], containers: [container("web")] });
    await h.kubelet.sync(desired(ok));
    await h.advance(5);
    expect(h.runtime.startsOf("setup")).toBe(2);
    expect(h.runtime.startsOf("web")).toBe(1);
    expect(h.pod(ok.key)!.initialized).toBe(true);

    const g = harness();
    g.runtime.behaviours.set("setup", { exitAfterMs: 300, exitCode: 4 });
    const bad = pod({ name: "bad", restartPolicy: "Always", init: [container("setup", { restartPolicy: "Never", restartPolicyRules: [inCodes(3)] })], containers: [container("web")] });
    await g.kubelet.sync(desired(bad));
    await g.advance(30);
    // Its own Never beats the pod's Always: the init container is not retried and the pod fails.
    expect(g.runtime.startsOf("setup")).toBe(1);
    expect(g.runtime.startsOf("web")).toBe(0);
    expect(g.pod(bad.key)!.phase).toBe("Failed");
  });

  test("a sidecar is untouched: it restarts under pod Never whatever it exits with", async () => {
    const h = harness();
    h.runtime.behaviours.set("proxy", (n) => (n < 2 ? { exitAfterMs: 300, exitCode: 1 } : {}));
    const web = pod({ name: "web", restartPolicy: "Never", init: [container("proxy", { restartPolicy: "Always" })], containers: [container("main", { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] })] });
    h.runtime.behaviours.set("main", {});
    await h.kubelet.sync(desired(web));
    await h.advance(30);
    expect(h.runtime.startsOf("proxy")).toBe(3);
    expect(h.pod(web.key)!.phase).toBe("Running");
  });

  test("the served pod: the rules in its spec, the restart count and last exit of a container restarted under pod Never, phase Running", async () => {
    const h = harness();
    h.runtime.behaviours.set("worker", (n) => (n < 1 ? { exitAfterMs: 300, exitCode: 42 } : {}));
    const job = pod({ name: "job", restartPolicy: "Never", containers: [container("worker", { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] })] });
    await h.kubelet.sync(desired(job));
    await h.advance(5);
    const served = servedPod(h.pod(job.key)!, { runtimeName: "fake" });
    expect(served.spec.containers[0]).toMatchObject({ restartPolicy: "Never", restartPolicyRules: [inCodes(42)] });
    expect(served.status?.phase).toBe("Running");
    const status = served.status!.containerStatuses![0]!;
    expect(status.restartCount).toBe(1);
    expect(status.state?.running).toBeDefined();
    expect(status.lastState?.terminated).toMatchObject({ exitCode: 42, reason: "Error" });
  });
});
