import { describe, expect, test } from "bun:test";
import type { Probe, ProbeKind } from "../../src/manifest/types.ts";
import { ProbeTracker } from "../../src/prober/tracker.ts";
import { FakeClock } from "../fake-clock.ts";

function probe(overrides: Partial<Probe> = {}): Probe {
  return {
    handler: { type: "tcpSocket", host: "", port: 8080 },
    initialDelaySeconds: 0,
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
    ...overrides,
  };
}

/** Starts and records one run at the clock's current time. */
function run(tracker: ProbeTracker, clock: FakeClock, ok: boolean) {
  tracker.start(clock.now());
  return tracker.record(ok, clock.now());
}

describe("ProbeTracker schedule", () => {
  test("waits initialDelaySeconds from the container start, then runs every periodSeconds", () => {
    const clock = new FakeClock();
    const startedAt = clock.now();
    const tracker = new ProbeTracker("readiness", probe({ initialDelaySeconds: 5, periodSeconds: 10 }));

    expect(tracker.nextDueAt(startedAt)).toBe(startedAt + 5000);
    clock.step(4999);
    expect(tracker.due(clock.now(), startedAt)).toBe(false);
    clock.step(1);
    expect(tracker.due(clock.now(), startedAt)).toBe(true);

    tracker.start(clock.now());
    expect(tracker.due(clock.now(), startedAt)).toBe(false);
    tracker.record(true, clock.now() + 300);
    expect(tracker.nextDueAt(startedAt)).toBe(startedAt + 15_000);
    clock.step(9999);
    expect(tracker.due(clock.now(), startedAt)).toBe(false);
    clock.step(1);
    expect(tracker.due(clock.now(), startedAt)).toBe(true);
  });

  test("with no initial delay the first run is due at the container start", () => {
    const clock = new FakeClock();
    const tracker = new ProbeTracker("liveness", probe());
    expect(tracker.due(clock.now(), clock.now())).toBe(true);
  });

  test("a run in flight is never due again and has no next due time until it settles", () => {
    const clock = new FakeClock();
    const startedAt = clock.now();
    const tracker = new ProbeTracker("readiness", probe({ periodSeconds: 1, timeoutSeconds: 30 }));
    tracker.start(clock.now());
    clock.stepSeconds(20);
    expect(tracker.inFlight).toBe(true);
    expect(tracker.due(clock.now(), startedAt)).toBe(false);
    expect(tracker.nextDueAt(startedAt)).toBeUndefined();
    tracker.record(false, clock.now());
    // The slow run started 20s ago, more than a period: the next one is due at once.
    expect(tracker.inFlight).toBe(false);
    expect(tracker.due(clock.now(), startedAt)).toBe(true);
  });

  test("discard ends the run without counting it", () => {
    const clock = new FakeClock();
    const tracker = new ProbeTracker("readiness", probe({ failureThreshold: 1 }));
    tracker.start(clock.now());
    tracker.discard();
    expect(tracker.inFlight).toBe(false);
    expect(tracker.snapshot().resultRun).toBe(0);
    expect(tracker.verdict).toBe("failure");
  });

  test("a new container attempt is probed after its own initial delay, not the old period", () => {
    const clock = new FakeClock();
    const tracker = new ProbeTracker("readiness", probe({ initialDelaySeconds: 3, periodSeconds: 10 }));
    clock.stepSeconds(3);
    run(tracker, clock, true);
    clock.stepSeconds(2);
    const secondStart = clock.now();
    tracker.newContainer();
    expect(tracker.nextDueAt(secondStart)).toBe(secondStart + 3000);
  });
});

describe("ProbeTracker thresholds", () => {
  const cases: Array<{ name: string; kind: ProbeKind; p: Partial<Probe>; results: boolean[]; want: Array<"success" | "failure" | undefined> }> = [
    {
      name: "readiness needs successThreshold in a row",
      kind: "readiness",
      p: { successThreshold: 2 },
      results: [true, false, true, true, true],
      want: [undefined, undefined, undefined, "success", "success"],
    },
    {
      name: "readiness keeps reporting failure every run past the threshold",
      kind: "readiness",
      p: { failureThreshold: 3 },
      results: [false, false, false, false, false],
      want: [undefined, undefined, "failure", "failure", "failure"],
    },
    {
      name: "an opposite result resets the run",
      kind: "readiness",
      p: { failureThreshold: 3 },
      results: [false, false, true, false, false, false],
      want: [undefined, undefined, "success", undefined, undefined, "failure"],
    },
    {
      name: "liveness successes report success each time",
      kind: "liveness",
      p: {},
      results: [true, true],
      want: ["success", "success"],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const clock = new FakeClock();
      const tracker = new ProbeTracker(c.kind, probe(c.p));
      const got = c.results.map((ok) => {
        clock.stepSeconds(10);
        return run(tracker, clock, ok);
      });
      expect(got).toEqual(c.want);
    });
  }

  test("initial verdicts follow the kubelet: readiness failure, liveness success, startup unknown", () => {
    expect(new ProbeTracker("readiness", probe()).verdict).toBe("failure");
    expect(new ProbeTracker("liveness", probe()).verdict).toBe("success");
    expect(new ProbeTracker("startup", probe()).verdict).toBe("unknown");
  });

  for (const kind of ["liveness", "startup"] as const) {
    test(`a ${kind} failure verdict holds the tracker until a new container, then counts afresh`, () => {
      const clock = new FakeClock();
      const tracker = new ProbeTracker(kind, probe({ failureThreshold: 2 }));
      const startedAt = clock.now();
      expect(run(tracker, clock, false)).toBeUndefined();
      clock.stepSeconds(10);
      expect(run(tracker, clock, false)).toBe("failure");
      expect(tracker.verdict).toBe("failure");
      expect(tracker.held).toBe(true);
      clock.stepSeconds(100);
      expect(tracker.due(clock.now(), startedAt)).toBe(false);
      expect(tracker.nextDueAt(startedAt)).toBeUndefined();

      tracker.newContainer();
      const restartedAt = clock.now();
      expect(tracker.verdict).toBe(kind === "liveness" ? "success" : "unknown");
      expect(tracker.due(clock.now(), restartedAt)).toBe(true);
      // The run was zeroed at the verdict: one failure is not enough again.
      expect(run(tracker, clock, false)).toBeUndefined();
      clock.stepSeconds(10);
      expect(run(tracker, clock, false)).toBe("failure");
    });
  }

  test("a readiness failure verdict never holds the tracker", () => {
    const clock = new FakeClock();
    const tracker = new ProbeTracker("readiness", probe({ failureThreshold: 1 }));
    expect(run(tracker, clock, false)).toBe("failure");
    expect(tracker.held).toBe(false);
    clock.stepSeconds(10);
    expect(tracker.due(clock.now(), clock.now() - 10_000)).toBe(true);
  });
});

describe("ProbeTracker snapshot", () => {
  test("restore keeps the counters, the verdict and the schedule; not the in-flight mark", () => {
    const clock = new FakeClock();
    const startedAt = clock.now();
    const p = probe({ failureThreshold: 3, periodSeconds: 10 });
    const tracker = new ProbeTracker("readiness", p);
    run(tracker, clock, true);
    clock.stepSeconds(10);
    run(tracker, clock, false);
    clock.stepSeconds(10);
    run(tracker, clock, false);
    tracker.start(clock.now() + 1);

    const snapshot = JSON.parse(JSON.stringify(tracker.snapshot()));
    expect(snapshot).toEqual({
      lastResult: "failure",
      resultRun: 2,
      verdict: "success",
      onHold: false,
      lastRunStartedAt: clock.now() + 1,
    });

    const restored = ProbeTracker.restore("readiness", p, snapshot);
    expect(restored.inFlight).toBe(false);
    expect(restored.verdict).toBe("success");
    expect(restored.nextDueAt(startedAt)).toBe(clock.now() + 1 + 10_000);
    // Two failures were carried over: the third trips the threshold.
    expect(restored.record(false, clock.now())).toBe("failure");
  });

  test("a fresh tracker's snapshot round-trips", () => {
    const tracker = new ProbeTracker("startup", probe());
    const restored = ProbeTracker.restore("startup", probe(), tracker.snapshot());
    expect(restored.snapshot()).toEqual({ resultRun: 0, verdict: "unknown", onHold: false });
  });
});
