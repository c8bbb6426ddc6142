/**
 * `events` and `describe pod` over a big database (issue 15): 1,000,000 events, 500,000 of them of
 * one pod, run as the compiled binary with stdout read through a pipe. For each: time to the first
 * line, to exit, peak RSS and bytes printed, next to floors measured in the same run: a compiled Bun
 * hello-world (the start-up no command can beat) and a compiled Bun script that only steps through
 * the rows (the reading no streaming can beat). Figures only, no assertions.
 *
 *   node_modules/.bin/bun bench/big-db.ts [EVENTS] [ROUNDS]   (default: 1000000 3)
 *   BIG_DB=PATH node_modules/.bin/bun bench/big-db.ts          (a database filled before, kept)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary } from "../test/e2e/helpers.ts";
import { fillBigDb } from "./big-db-fill.ts";
import { buildFloor, medianRun, printRow } from "./cli-timing.ts";

const events = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(join(tmpdir(), "mk-bench-bigdb-"));
try {
  const binary = ensureBinary();
  const floor = buildFloor(dir);
  const filling = performance.now();
  const db = process.env.BIG_DB ?? (await fillBigDb(dir, { busyPodEvents: events / 2, otherEvents: events / 2, otherPods: 99 }));
  console.log(`${events} events (${events / 2} of crash-lab), filled in ${((performance.now() - filling) / 1000).toFixed(1)} s; medians of ${rounds} runs; a shared, loaded machine`);
  const hello = await medianRun([floor, "hello"], rounds);
  const rows = await medianRun([floor, "rows", db], rounds);
  printRow("events", await medianRun([binary, "events", "--db", db], rounds), "rows", rows);
  printRow("events --for pod/web-1-lab", await medianRun([binary, "events", "--for", "pod/web-1-lab", "--db", db], rounds), "hello", hello);
  printRow("events --for pod/web-1-lab -o json", await medianRun([binary, "events", "--for", "pod/web-1-lab", "-o", "json", "--db", db], rounds), "hello", hello);
  printRow("describe pod crash-lab", await medianRun([binary, "describe", "pod", "crash-lab", "--db", db], rounds), "hello", hello);
  printRow("--version (the CLI's own start-up)", await medianRun([binary, "--version"], rounds), "hello", hello);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
