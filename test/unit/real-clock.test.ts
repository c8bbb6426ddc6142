/**
 * The real clock's timers: a delay past what one JavaScript timer holds (2^31 - 1 ms, about 24.8
 * days; more fires at once, as a 32-bit overflow) waits its whole length, armed in parts. The
 * global timer functions are stubbed so the test steps the parts itself and never waits.
 */
import { afterAll, afterEach, beforeAll, expect, spyOn, test, type Mock } from "bun:test";
import { realClock } from "../../src/clock.ts";

const armed: { fn: () => void; ms: number }[] = [];
let spies: Mock<(...args: never[]) => unknown>[] = [];
// Stubbed only while this file runs: the other files in the process keep their timers.
beforeAll(() => {
  spies = [
    spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms: number) => (armed.push({ fn, ms }), armed.length)) as never),
    spyOn(globalThis, "clearTimeout").mockImplementation(((id: number) => void (armed[id - 1] && (armed[id - 1]!.fn = () => {}))) as never),
  ] as never;
});
afterAll(() => spies.forEach((spy) => spy.mockRestore()));
afterEach(() => void (armed.length = 0));

/** Runs the last armed timer, as its delay passing would. */
function fireLast(): number {
  const timer = armed.at(-1)!;
  timer.fn();
  return timer.ms;
}

test("a watch's timeoutSeconds of 2,147,484 (past one timer) fires only after all of it", () => {
  let fired = false;
  realClock.setTimeout(() => (fired = true), 2_147_484_000);
  expect(armed.at(-1)!.ms).toBeLessThanOrEqual(2 ** 31 - 1);
  let waited = fireLast();
  expect(fired).toBe(false);
  while (!fired) waited += fireLast();
  expect(waited).toBe(2_147_484_000);
});

test("a delay of years is armed in parts, each within one timer, and cancelled at any part", () => {
  let fired = false;
  const cancel = realClock.setTimeout(() => (fired = true), 1e12);
  for (let part = 0; part < 3; part++) fireLast();
  expect(armed.every((timer) => timer.ms <= 2 ** 31 - 1 && timer.ms > 0)).toBe(true);
  cancel();
  for (let part = 0; part < 1000 && !fired; part++) fireLast();
  expect(fired).toBe(false);
});

test("a short or negative delay is one timer, as before", () => {
  let fired = 0;
  realClock.setTimeout(() => fired++, 5);
  realClock.setTimeout(() => fired++, -3);
  expect(armed.map((timer) => timer.ms)).toEqual([5, 0]);
  armed.forEach((timer) => timer.fn());
  expect(fired).toBe(2);
});
