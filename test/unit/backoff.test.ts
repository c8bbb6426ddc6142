import { describe, expect, test } from "bun:test";
import { BackoffStore, backoffKey, backoffSchedule, backoffSettings, restartDelayMs } from "../../src/kubelet/backoff.ts";
import { FakeClock } from "../fake-clock.ts";

describe("backoff schedule", () => {
  test("matches the kubelet's curve with the defaults", () => {
    const rows = backoffSchedule(backoffSettings()).map((r) => [r.restart, r.waitMs / 1000, r.sinceFirstCrashMs / 1000]);
    expect(rows).toEqual([
      [1, 0, 0],
      [2, 10, 10],
      [3, 20, 30],
      [4, 40, 70],
      [5, 80, 150],
      [6, 160, 310],
      [7, 300, 610],
      [8, 300, 910],
      [9, 300, 1210],
    ]);
  });

  test("a cap below the base also lowers the first wait", () => {
    const settings = backoffSettings({ baseSeconds: 10, capSeconds: 4 });
    expect([1, 2, 3].map((n) => restartDelayMs(n, settings))).toEqual([0, 4000, 4000]);
  });

  test("refuses a non-positive base, naming the flag and value", () => {
    expect(() => backoffSettings({ baseSeconds: 0 })).toThrow("--backoff-base must be a number of seconds above 0 (got 0)");
    expect(() => backoffSettings({ capSeconds: Number.NaN })).toThrow("--backoff-max");
  });
});

describe("BackoffStore", () => {
  const key = backoffKey("uid-1", "crash");

  test("first restart immediate, then base, doubling to the cap, measured from the finish", () => {
    const clock = new FakeClock();
    const store = new BackoffStore(clock, backoffSettings({ baseSeconds: 10, capSeconds: 40 }));
    const waits: number[] = [];
    for (let crash = 0; crash < 6; crash++) {
      const finishedAt = clock.now();
      waits.push(store.remainingMs(key, finishedAt));
      clock.step(store.remainingMs(key, finishedAt));
      expect(store.remainingMs(key, finishedAt)).toBe(0);
      store.next(key, finishedAt);
      clock.step(100); // the container runs briefly, then crashes again
    }
    expect(waits).toEqual([0, 10_000, 20_000, 40_000, 40_000, 40_000]);
  });

  test("the wait counts from the finish, not from when the loop notices", () => {
    const clock = new FakeClock();
    const store = new BackoffStore(clock, backoffSettings({ baseSeconds: 10 }));
    store.next(key, clock.now());
    const finishedAt = clock.now();
    clock.step(4000);
    expect(store.remainingMs(key, finishedAt)).toBe(6000);
  });

  test("is forgotten after 2 x cap of clean running", () => {
    const clock = new FakeClock();
    const store = new BackoffStore(clock, backoffSettings({ baseSeconds: 10, capSeconds: 300 }));
    store.next(key, clock.now());
    store.next(key, clock.now());
    clock.step(600_001);
    const finishedAt = clock.now();
    expect(store.remainingMs(key, finishedAt)).toBe(0);
    expect(store.next(key, finishedAt).delayMs).toBe(10_000);
  });

  test("just under 2 x cap the curve continues", () => {
    const clock = new FakeClock();
    const store = new BackoffStore(clock, backoffSettings({ baseSeconds: 10, capSeconds: 300 }));
    store.next(key, clock.now());
    clock.step(599_000);
    expect(store.next(key, clock.now()).delayMs).toBe(20_000);
  });

  test("restore brings entries back so a restarted agent does not reset the curve", () => {
    const clock = new FakeClock();
    const store = new BackoffStore(clock, backoffSettings());
    store.next(key, clock.now());
    store.next(key, clock.now());
    const restored = new BackoffStore(clock, backoffSettings());
    restored.restore(store.all());
    expect(restored.remainingMs(key, clock.now())).toBe(20_000);
  });
});
