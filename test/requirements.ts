/**
 * Tests that need something of this machine (an engine, a tool, root, writable cgroups): with it
 * they run; without it they are skipped with the reason printed, except under CI=true, where every
 * test must run, so the missing thing is a failing test that names it (and scripts/test installs
 * what it can beforehand).
 */
import { describe, test } from "bun:test";

const UNDER_CI = process.env.CI === "true";

/** What is missing, as a sentence fragment ("no kubectl on PATH"); undefined when nothing is. */
export type Missing = string | undefined;

function failUnderCI(name: string, missing: string): void {
  test(`${name}: what it needs is here (required under CI=true)`, () => {
    throw new Error(`CI=true requires "${name}" to run, but ${missing}`);
  });
}

/** `describe` for a block that needs what `missing` names. */
export function describeNeeding(name: string, missing: Missing, body: () => void): void {
  if (missing === undefined) return describe(name, body);
  if (UNDER_CI) return failUnderCI(name, missing);
  console.warn(`[skipped] ${name}: ${missing}`);
  describe.skip(`${name} (skipped: ${missing})`, body);
}

/** `test` for a case that needs what `missing` names. */
export function testNeeding(name: string, missing: Missing, body: () => unknown, timeoutMs?: number): void {
  if (missing === undefined) return void test(name, body as () => void, timeoutMs);
  if (UNDER_CI) return failUnderCI(name, missing);
  console.warn(`[skipped] ${name}: ${missing}`);
  test.skip(`${name} (skipped: ${missing})`, body as () => void);
}

/** Missing unless this process runs as root (mounting a tmpfs needs it). */
export function rootMissing(): Missing {
  return process.getuid?.() === 0 ? undefined : "it needs root (mounting a tmpfs)";
}
