/** The open-files limit through libc, and the connections the API may hold within it less the loop's reserve. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connectionsWithin, LOOP_DESCRIPTOR_RESERVE, openFilesLimit, raiseOpenFilesLimit } from "../../src/host/open-files.ts";

test("the limit read through getrlimit is the kernel's, and raising it leaves the soft limit at the hard one", () => {
  const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((text) => text.startsWith("Max open files"))!;
  const [soft, hard] = line.split(/\s+/).slice(3, 5).map((value) => (value === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(value)));
  expect(openFilesLimit()).toEqual({ soft: soft!, hard: hard! });
  expect(raiseOpenFilesLimit()).toEqual({ soft: hard!, hard: hard! });
});

test("connections get what the reserve leaves, three descriptors each, never more than configured and never none", () => {
  const cases: [soft: number, configured: number, expected: number][] = [
    [1024, 4000, Math.floor((1024 - LOOP_DESCRIPTOR_RESERVE) / 3)],
    [1_048_576, 4000, 4000],
    [LOOP_DESCRIPTOR_RESERVE + 30, 4000, 10],
    [LOOP_DESCRIPTOR_RESERVE, 4000, 1],
    [100, 4000, 1],
  ];
  for (const [soft, configured, expected] of cases) expect({ soft, configured, got: connectionsWithin(soft, configured) }).toEqual({ soft, configured, got: expected });
});
