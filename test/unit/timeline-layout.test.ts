import { describe, expect, test } from "bun:test";
import { layoutTimeline, type Segment } from "../../src/tools/timeline/layout.ts";
import type { Ending, TimelineAttempt, TimelineContainer, TimelineMark } from "../../src/tools/timeline/model.ts";

const S = 1000;

function attempt(number: number, startS: number, endS: number | undefined, ending: Ending = "error"): TimelineAttempt {
  return { attempt: number, startedAt: startS * S, ...(endS !== undefined && { finishedAt: endS * S }), ending: endS === undefined ? "running" : ending };
}

function row(attempts: TimelineAttempt[], extra: Partial<TimelineContainer> = {}): TimelineContainer {
  return { name: "app", kind: "app", attempts, marks: [], waitingNow: false, unloadedAttempts: 0, ...extra };
}

/** Segments as `bar 0-10 #3` / `wait 10-20 10s` for readable comparisons. */
function shape(segments: Segment[]): string[] {
  return segments.map((s) => (s.kind === "bar" ? `bar ${s.from}-${s.to} #${s.attempt.attempt}${s.clipped ? " clipped" : ""}` : `wait ${s.from}-${s.to} ${s.waitMs / S}s${s.ongoing ? " ongoing" : ""}`));
}

describe("timeline layout", () => {
  test("time is linear when everything fits: 40 s on 40 columns is a column a second, and the axis ends at now", () => {
    const layout = layoutTimeline([row([attempt(0, 0, 10), attempt(1, 20, 30)])], 40 * S, 40);
    expect(shape(layout.rows[0]!.segments)).toEqual(["bar 0-10 #0", "wait 10-20 10s", "bar 20-30 #1"]);
    expect(layout.columns).toBe(40);
    expect(layout.ticks).toEqual([
      { column: 0, at: 0 },
      { column: 10, at: 10 * S },
      { column: 20, at: 20 * S },
      { column: 30, at: 30 * S },
      { column: 40, at: 40 * S },
    ]);
    expect(layout.compressed).toEqual([]);
    expect(layout.cutAt).toBeUndefined();
  });

  test("an immediate restart keeps a column of wait between the bars; the running attempt reaches now", () => {
    const layout = layoutTimeline([row([attempt(0, 0, 5), attempt(1, 5, undefined)])], 10 * S, 20);
    // 19 columns for 10 s after the restart's own column: 9.5 each, the newer slot gets the odd one.
    expect(shape(layout.rows[0]!.segments)).toEqual(["bar 0-9 #0", "wait 9-10 0s", "bar 10-20 #1"]);
    expect(layout.columns).toBe(20);
  });

  test("a container waiting in back-off now has an ongoing wait to now", () => {
    const layout = layoutTimeline([row([attempt(0, 0, 1), attempt(1, 11, 12)], { waitingNow: true })], 30 * S, 30);
    expect(shape(layout.rows[0]!.segments)).toEqual(["bar 0-1 #0", "wait 1-11 10s", "bar 11-12 #1", "wait 12-30 18s ongoing"]);
    // 18 s is not ten times 10 s: nothing is compressed.
    expect(layout.compressed).toEqual([]);
  });

  test("short attempts keep one column and the waits share the rest in proportion", () => {
    // 1 s attempts and 10 s waits on 18 columns: 3 bars take 3, two waits 7.5 each.
    const layout = layoutTimeline([row([attempt(0, 0, 1), attempt(1, 11, 12), attempt(2, 22, 23)])], 23 * S, 18);
    expect(shape(layout.rows[0]!.segments)).toEqual(["bar 0-1 #0", "wait 1-8 10s", "bar 8-9 #1", "wait 9-17 10s", "bar 17-18 #2"]);
  });

  test("a short history is drawn at one column per 100 ms, narrower than the width", () => {
    const layout = layoutTimeline([row([attempt(0, 0, undefined)])], 3 * S, 100);
    expect(layout.columns).toBe(30);
    expect(shape(layout.rows[0]!.segments)).toEqual(["bar 0-30 #0"]);
  });

  test("rows share the axis: an init container's bar ends where the app's begins", () => {
    const init = row([attempt(0, 0, 4, "completed")], { name: "setup", kind: "init" });
    const app = row([attempt(0, 4, undefined)]);
    const layout = layoutTimeline([init, app], 8 * S, 8);
    expect(shape(layout.rows[0]!.segments)).toEqual(["bar 0-4 #0"]);
    expect(shape(layout.rows[1]!.segments)).toEqual(["bar 4-8 #0"]);
  });

  test("a span ten times longer than any other is compressed to half the width so the newest restarts stay readable", () => {
    // Two hours of running, then two 1 s crashes 10 s apart and a wait going on: on 40 columns the
    // two hours take 20 (half) and the last 32 s the other 20, at 0.6 column a second.
    const layout = layoutTimeline([row([attempt(0, 0, 7200), attempt(1, 7210, 7211), attempt(2, 7221, 7222)], { waitingNow: true })], 7232 * S, 40);
    expect(shape(layout.rows[0]!.segments)).toEqual([
      "bar 0-20 #0",
      "wait 20-26 10s",
      "bar 26-27 #1",
      "wait 27-33 10s",
      "bar 33-34 #2",
      "wait 34-40 10s ongoing",
    ]);
    expect(layout.compressed).toEqual([{ from: 0, to: 20, fromAt: 0, toAt: 7200 * S }]);
  });

  test("with more attempts than the width can show, the oldest are cut and counted", () => {
    // 100 crashes of 1 s, 10 s apart, on 60 columns: at most 20 slots (3 columns each on average),
    // so the newest 10 attempts and the 10 waits before them; attempt 89 ends exactly at the cut.
    const attempts = Array.from({ length: 100 }, (_, k) => attempt(k, 11 * k, 11 * k + 1));
    const layout = layoutTimeline([row(attempts, { unloadedAttempts: 5 })], 1090 * S, 60);
    expect(layout.cutAt).toBe(980 * S);
    expect(layout.rows[0]!.hiddenAttempts).toBe(5 + 90);
    expect(layout.hiddenAttempts).toBe(95);
    const segments = layout.rows[0]!.segments;
    expect(segments.filter((s) => s.kind === "bar").map((s) => (s.kind === "bar" ? s.attempt.attempt : -1))).toEqual([90, 91, 92, 93, 94, 95, 96, 97, 98, 99]);
    // 10 bars of a column and 10 waits of 5 columns fill the 60 exactly.
    expect(shape(segments).slice(0, 3)).toEqual(["wait 0-5 10s", "bar 5-6 #90", "wait 6-11 10s"]);
    expect(layout.columns).toBe(60);
  });

  test("an attempt that began before the cut is clipped at the left edge, not hidden", () => {
    const attempts = [attempt(0, 0, 100), ...Array.from({ length: 30 }, (_, k) => attempt(k + 1, 100 + 2 * k, 101 + 2 * k))];
    const sidecar = row([attempt(0, 0, undefined)], { name: "proxy", kind: "sidecar" });
    const layout = layoutTimeline([row(attempts), sidecar], 160 * S, 30);
    expect(layout.cutAt).toBeGreaterThan(0);
    const proxy = layout.rows[1]!.segments;
    expect(shape(proxy)).toEqual(["bar 0-30 #0 clipped"]);
    expect(layout.rows[1]!.hiddenAttempts).toBe(0);
  });

  test("marks land at their instant's column; marks before the cut are dropped", () => {
    const mark = (atS: number): TimelineMark => ({ at: atS * S, kind: "unhealthy", message: "Liveness probe failed", count: 1, firstAt: atS * S, lastAt: atS * S });
    const layout = layoutTimeline([row([attempt(0, 0, 10), attempt(1, 20, 30)], { marks: [mark(15), mark(29.9), mark(40)] })], 40 * S, 40);
    expect(layout.rows[0]!.marks.map((m) => m.column)).toEqual([15, 29, 39]);
  });

  test("a long slot to scale gets ticks inside it too, at their interpolated instants", () => {
    const layout = layoutTimeline([row([attempt(0, 0, undefined)])], 64 * S, 64);
    expect(layout.ticks).toEqual([
      { column: 0, at: 0 },
      { column: 16, at: 16 * S, interior: true },
      { column: 32, at: 32 * S, interior: true },
      { column: 48, at: 48 * S, interior: true },
      { column: 64, at: 64 * S },
    ]);
  });

  test("a pod with no attempt yet has an empty picture, not an error", () => {
    const layout = layoutTimeline([row([])], 5 * S, 40);
    expect(layout.rows[0]!.segments).toEqual([]);
    expect(layout.columns).toBe(1);
  });
});
