import { expect, test } from "bun:test";
import { cappedDoubling } from "../../src/capped-doubling.ts";

test.each([
  ["no doubling is the start", 10_000, 300_000, 0, 10_000],
  ["each doubling twice the wait", 10_000, 300_000, 3, 80_000],
  ["never past the cap", 10_000, 300_000, 5, 300_000],
  ["a start above the cap is the cap", 20_000, 8_000, 0, 8_000],
  ["a negative count is the start (a first failure of a 1-based counter minus one)", 2_000, 60_000, -1, 2_000],
  ["thousands of failures stay at the cap", 250, 5_000, 100_000, 5_000],
  ["a zero start stays zero however long it doubles (no NaN)", 0, 5_000, 100_000, 0],
])("%s", (_name, start, cap, doublings, expected) => {
  expect(cappedDoubling(start, cap, doublings)).toBe(expected);
});
