/**
 * Timing a CLI command from outside, as a user sees it: the time to its first line of output, to its
 * exit, its peak RSS (GNU time's maximum resident set size) and how much it printed. Shared by the
 * big-database and log-tail benches.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");

export interface Run {
  firstLineMs: number;
  totalMs: number;
  peakMiB: number;
  bytes: number;
}

/**
 * Two runs of `argv`: one read until its first line (then killed), and one whole, its stdout piped
 * into `wc -c` (a pipe, as `| less` would be, so its back-pressure is exercised) under /usr/bin/time,
 * whose maximum RSS of the pipeline's processes is the command's.
 */
export async function timeCommand(argv: string[]): Promise<Run> {
  const env = { ...process.env, TZ: "UTC", NO_COLOR: "1" };
  const start = performance.now();
  const child = Bun.spawn(argv, { stdout: "pipe", stderr: "ignore", env });
  let firstLineMs = Number.NaN;
  for await (const chunk of child.stdout) {
    if (!chunk.includes(10)) continue;
    firstLineMs = performance.now() - start;
    break;
  }
  child.kill("SIGKILL");
  await child.exited;

  const dir = mkdtempSync(join(tmpdir(), "mk-bench-time-"));
  try {
    const rssFile = join(dir, "rss");
    const wholeStart = performance.now();
    const whole = spawnSync("/usr/bin/time", ["-f", "%M", "-o", rssFile, "sh", "-c", '"$@" | wc -c', "sh", ...argv], { encoding: "utf8", env });
    const totalMs = performance.now() - wholeStart;
    const peakMiB = Number(readFileSync(rssFile, "utf8").trim().split("\n").at(-1)) / 1024;
    return { firstLineMs, totalMs, peakMiB, bytes: Number(whole.stdout.trim()) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The median of each figure over `rounds` runs (after one run to warm the page cache). */
export async function medianRun(argv: string[], rounds: number): Promise<Run> {
  await timeCommand(argv);
  const runs: Run[] = [];
  for (let i = 0; i < rounds; i++) runs.push(await timeCommand(argv));
  const median = (pick: (run: Run) => number) => runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  return { firstLineMs: median((r) => r.firstLineMs), totalMs: median((r) => r.totalMs), peakMiB: median((r) => r.peakMiB), bytes: median((r) => r.bytes) };
}

/** One figure's line: the command's numbers, then the floor's beside them. */
export function printRow(label: string, run: Run, floorLabel: string, floor: Run): void {
  const f = (ms: number) => (Number.isNaN(ms) ? "-" : `${ms.toFixed(ms < 100 ? 1 : 0)} ms`);
  console.log(
    `${label.padEnd(34)} first line ${f(run.firstLineMs).padStart(9)}  total ${f(run.totalMs).padStart(9)}  peak ${run.peakMiB.toFixed(0).padStart(5)} MiB  ${(run.bytes / 1e6).toFixed(1).padStart(7)} MB out` +
      `   | floor (${floorLabel}): first line ${f(floor.firstLineMs)}, total ${f(floor.totalMs)}, peak ${floor.peakMiB.toFixed(0)} MiB`,
  );
}

/** bench/floor.ts compiled as minikubelet is, so both pay the same start-up. */
export function buildFloor(dir: string): string {
  const outfile = join(dir, "floor");
  const built = spawnSync(join(ROOT, "node_modules/.bin/bun"), ["build", "--compile", "--minify-syntax", "--outfile", outfile, join(ROOT, "bench/floor.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`bun build bench/floor.ts failed: ${built.stderr}`);
  return outfile;
}
