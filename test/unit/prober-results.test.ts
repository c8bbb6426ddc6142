/**
 * The prober on its own (issue 22): it runs each probe on its own schedule and writes verdicts into
 * the results cache; it kills nothing and imports nothing of the loop, which reads the cache and
 * decides. Startup gates the other kinds; a settled run is told to the listener.
 */
import { expect, test } from "bun:test";
import { ProbeManager, type ProbeRunner, type ProbeTarget } from "../../src/prober/probe-manager.ts";
import type { Probe, ProbeKind } from "../../src/manifest/types.ts";
import { FakeClock } from "../fake-clock.ts";
import { probe } from "../pod-builder.ts";

const check = { type: "exec" as const, command: ["check"] };

/** Answers each kind from `answers` (true: success), recording when each kind ran. */
function runner(clock: FakeClock, answers: Partial<Record<ProbeKind, (call: number) => boolean>>) {
  const calls: { kind: ProbeKind; at: number }[] = [];
  const run: ProbeRunner = {
    probe: async (_probe: Probe, target) => {
      const call = calls.filter((c) => c.kind === target.kind).length;
      calls.push({ kind: target.kind, at: clock.now() });
      const ok = answers[target.kind]?.(call) ?? true;
      return { ok, message: ok ? "" : "HTTP probe failed with statuscode: 503" };
    },
  };
  return { run, calls };
}

/** Steps the clock a second at a time, letting each probe's promise settle. */
async function seconds(clock: FakeClock, n: number) {
  for (let i = 0; i < n * 10; i++) {
    clock.step(100);
    for (let j = 0; j < 3; j++) await Promise.resolve();
  }
}

function target(clock: FakeClock, container: ProbeTarget["container"]): ProbeTarget {
  return { podKey: "demo/web", containerId: "c1", container, startedAt: clock.now(), podIP: "127.0.0.1" };
}

test("a failing liveness probe is a failure verdict in the cache after failureThreshold runs, and nothing else", async () => {
  const clock = new FakeClock();
  const { run, calls } = runner(clock, { liveness: () => false });
  const manager = new ProbeManager({ runner: run, clock });
  const heard: string[] = [];
  manager.listen({ event: (_t, type, reason, message) => heard.push(`${type} ${reason}: ${message}`), probed: () => heard.push("probed") });
  manager.probe(target(clock, { name: "web", livenessProbe: probe(check, { periodSeconds: 1, failureThreshold: 3 }) }));
  expect(manager.results.liveness.get("c1")).toBe("success");
  await seconds(clock, 1.5);
  expect(manager.results.liveness.get("c1")).toBe("success");
  await seconds(clock, 1);
  expect(manager.results.liveness.get("c1")).toBe("failure");
  expect(heard.filter((line) => line !== "probed")).toEqual(Array(3).fill("Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 503"));
  expect(heard.filter((line) => line === "probed")).toHaveLength(3);
  // On hold once it failed: the kubelet probes the next attempt, not this dying one.
  await seconds(clock, 5);
  expect(calls).toHaveLength(3);
  expect(manager.counters("c1").liveness).toMatchObject({ verdict: "failure", onHold: true });
});

test("startup gates liveness and readiness; its success starts them, and readiness flips its verdict both ways", async () => {
  const clock = new FakeClock();
  const { run, calls } = runner(clock, { startup: (call) => call >= 2, readiness: (call) => call !== 1 });
  const manager = new ProbeManager({ runner: run, clock });
  manager.probe(
    target(clock, {
      name: "web",
      startupProbe: probe(check, { periodSeconds: 1, failureThreshold: 10 }),
      livenessProbe: probe(check, { periodSeconds: 1 }),
      readinessProbe: probe(check, { periodSeconds: 1, failureThreshold: 1 }),
    }),
  );
  expect([manager.results.startup.get("c1"), manager.results.readiness.get("c1")]).toEqual(["unknown", "failure"]);
  await seconds(clock, 2.5);
  expect(calls.map((c) => c.kind)).toEqual(["startup", "startup", "startup", "liveness", "readiness"]);
  expect(manager.results.startup.get("c1")).toBe("success");
  expect(manager.results.readiness.get("c1")).toBe("success");
  await seconds(clock, 1);
  expect(manager.results.readiness.get("c1")).toBe("failure");
  await seconds(clock, 1);
  expect(manager.results.readiness.get("c1")).toBe("success");
});

test("forget stops the attempt's probes, drops a run in flight and its verdicts", async () => {
  const clock = new FakeClock();
  let settle: (() => void) | undefined;
  const manager = new ProbeManager({
    clock,
    runner: { probe: () => new Promise((resolve) => (settle = () => resolve({ ok: false, message: "late" }))) },
  });
  const heard: string[] = [];
  manager.listen({ event: (_t, _type, reason) => heard.push(reason), probed: () => heard.push("probed") });
  manager.probe(target(clock, { name: "web", readinessProbe: probe(check, { periodSeconds: 1, failureThreshold: 1 }) }));
  await seconds(clock, 0.5);
  expect(settle).toBeDefined();
  manager.forget("c1");
  settle!();
  await seconds(clock, 3);
  expect(heard).toEqual([]);
  expect(manager.results.readiness.get("c1")).toBeUndefined();
  expect(clock.pendingTimers()).toBe(0);
});
