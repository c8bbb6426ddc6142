/** The pure half of triage on hand-made facts: the branches a fake runtime cannot easily reach, and the arithmetic. */
import { describe, expect, test } from "bun:test";
import { backoffSettings } from "../../src/kubelet/backoff.ts";
import { backoffOutlook } from "../../src/tools/triage/backoff-outlook.ts";
import { explainExit } from "../../src/tools/triage/exit-cause.ts";
import type { ContainerFacts, EventFact } from "../../src/tools/triage/facts.ts";
import { pickContainer } from "../../src/tools/triage/pick-container.ts";
import { stopsDuring } from "../../src/tools/triage/stops.ts";

const app = { kind: "app" as const, restartPolicy: "Always" as const };

describe("explainExit", () => {
  test.each([
    [{ exitCode: 0 }, { kind: "init" as const, restartPolicy: "Always" as const }, "completed"],
    [{ exitCode: 0 }, { kind: "sidecar" as const, restartPolicy: "Never" as const }, "completed-restarted"],
    [{ exitCode: 128 }, app, "start-error"],
    [{ exitCode: 128, reason: "CreateContainerConfigError", message: "no such volume" }, app, "start-error"],
    [{ exitCode: 137, reason: "OOMKilled" }, app, "oom-killed"],
    [{ exitCode: 255 }, app, "signal"],
    [{ exitCode: 2 }, app, "app-exit-code"],
  ])("%o as %o: %s", (end, context, cause) => {
    expect(explainExit(end, { uncertain: [] }, context).cause).toBe(cause as never);
  });

  test("a signal with no name is still 128 + n", () => {
    expect(explainExit({ exitCode: 200 }, { uncertain: [] }, app).title).toBe("Killed by signal 72 (exit 200 = 128 + 72)");
  });

  test("OOMKilled wins over a probe kill in the same window: the kernel's reason is recorded, ours is an intent", () => {
    const killing = { event: event("Killing", "Container app failed liveness probe, will be restarted", 5), spans: false };
    expect(explainExit({ exitCode: 137, reason: "OOMKilled" }, { probeKill: { probe: "liveness", killing, unhealthy: [] }, uncertain: [] }, app).cause).toBe("oom-killed");
  });
});

function event(reason: string, message: string, at: number, extra: Partial<EventFact> = {}): EventFact {
  return { type: reason === "Killing" ? "Normal" : "Warning", reason, message, count: 1, firstAt: at, lastAt: at, ...extra };
}

describe("stopsDuring ties repeat-counted events to an attempt's window", () => {
  test("by the first or last time inside it; a row spanning it is uncertain, never a cause; times outside it do not count", () => {
    const window = { startedAt: 100, finishedAt: 200 };
    expect(stopsDuring([event("Killing", "Container app failed liveness probe, will be restarted", 150)], window).probeKill?.killing.spans).toBe(false);
    const spanning = stopsDuring([event("Killing", "Container app failed liveness probe, will be restarted", 50, { count: 3, lastAt: 250 })], window);
    expect(spanning.probeKill).toBeUndefined();
    expect(spanning.uncertain.map((found) => found.spans)).toEqual([true]);
    expect(stopsDuring([event("Killing", "Container app failed liveness probe, will be restarted", 50, { count: 3, lastAt: 90 })], window)).toEqual({ uncertain: [] });
    expect(stopsDuring([event("Killing", "Stopping container app", 190), event("GraceExpired", "…", 195)], window)).toMatchObject({ agentStop: {}, graceExpired: {} });
  });

  test("a GraceExpired inside with a single bracketing Killing row: that row held this attempt's Killing (deduced); two candidates stay uncertain", () => {
    const window = { startedAt: 100, finishedAt: 200 };
    const liveness = event("Killing", "Container app failed liveness probe, will be restarted", 50, { count: 3, lastAt: 250 });
    const deduced = stopsDuring([liveness, event("GraceExpired", "…", 195)], window);
    expect(deduced.probeKill?.probe).toBe("liveness");
    expect(deduced.deduced?.event).toBe(liveness);
    expect(deduced.uncertain).toEqual([]);
    const stop = event("Killing", "Stopping container app", 40, { count: 2, lastAt: 260 });
    const ambiguous = stopsDuring([liveness, stop, event("GraceExpired", "…", 195)], window);
    expect(ambiguous.probeKill).toBeUndefined();
    expect(ambiguous.uncertain).toHaveLength(2);
  });
});

describe("backoffOutlook", () => {
  const settings = backoffSettings({ baseSeconds: 10, capSeconds: 300 });
  test("no entry: the next start is at once and the next wait is the base", () => {
    expect(backoffOutlook(undefined, 1000, settings)).toEqual({ waitMs: 0, nextStartAt: 1000, nextWaitMs: 10_000, resetAfterMs: 600_000 });
  });
  test("an entry whose last restart is more than 2 x cap before the finish is forgotten, as the kubelet forgets it", () => {
    expect(backoffOutlook({ delayMs: 300_000, updatedAt: 0 }, 600_001, settings).waitMs).toBe(0);
    expect(backoffOutlook({ delayMs: 300_000, updatedAt: 0 }, 600_000, settings)).toEqual({ waitMs: 300_000, nextStartAt: 900_000, nextWaitMs: 300_000, resetAfterMs: 600_000, resetAt: 600_000 });
  });
});

describe("pickContainer", () => {
  const facts = (name: string, kind: ContainerFacts["kind"], status: ContainerFacts["status"]): ContainerFacts => ({
    name, kind, image: "x", command: [], probes: { startup: false, liveness: false, readiness: false }, status, attempts: [], events: [],
  });
  test("the worst first: a waiting error beats restarts beats not ready; none in trouble falls back to the first app container", () => {
    const containers = [
      facts("setup", "init", { name: "setup", ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } }),
      facts("web", "app", { name: "web", ready: false, restartCount: 0, state: { running: {} } }),
      facts("worker", "app", { name: "worker", ready: true, restartCount: 4, state: { running: {} }, lastState: { terminated: { exitCode: 1 } } }),
      facts("cache", "app", { name: "cache", ready: false, restartCount: 2, state: { waiting: { reason: "CrashLoopBackOff" } } }),
    ];
    expect(pickContainer(containers, true)).toEqual({ name: "cache", inTrouble: ["cache", "worker", "web"] });
    expect(pickContainer(containers.slice(0, 1), true)).toEqual({ name: "setup", inTrouble: [] });
  });
});
