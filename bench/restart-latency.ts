/**
 * Exit -> next start of a crashing container (issue 15), process runtime, compiled binary, measured
 * from outside: each container stamps the clock as its last instruction before it crashes and as
 * the first of its next run; the figure is the gap. N pods crash together (they all wait on one
 * fifo, and the bench ends every wait at once). Only first restarts are measured, which the
 * kubelet makes at once: each round runs new pods.
 * The floor beside it: a shell running the same pair (the container, then the container again),
 * alone and N at a time, triggered the same way.
 *   node_modules/.bin/bun bench/restart-latency.ts [PODS...] [--rounds R]     (default: 40 5, 5 rounds)
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { BenchAgent, BenchDir, podManifest, summary, until } from "./stamps.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 5;
const sizes = args.length > 0 ? args.map(Number) : [40, 5];

/** Waits until every name has stamped `s` `starts` times, lets them reach the fifo, ends the wait, and returns each name's gap. */
async function crashTogether(dir: BenchDir, names: string[]): Promise<number[]> {
  const stamped = (name: string, kind: string) => dir.readStamps(name).filter((s) => s.kind === kind).length;
  await until("every container's first start", () => names.every((n) => stamped(n, "s") >= 1));
  await Bun.sleep(200);
  await until("every container's crash", () => {
    if (names.every((n) => stamped(n, "e") >= 1)) return true;
    dir.trigger();
    return false;
  });
  await until("every container's second start", () => names.every((n) => stamped(n, "s") >= 2));
  return names.map((name) => {
    const stamps = dir.readStamps(name);
    const exit = stamps.find((s) => s.kind === "e")!;
    const next = stamps.filter((s) => s.kind === "s")[1]!;
    return next.ms - exit.ms;
  });
}

async function floor(count: number, floorRounds = rounds): Promise<number[]> {
  const dir = new BenchDir();
  const gaps: number[] = [];
  try {
    for (let round = 0; round < floorRounds; round++) {
      const names = Array.from({ length: count }, (_, i) => `floor-${round}-${i}`);
      const shells = names.map((name) => {
        const run = `bash ${dir.script} ${dir.stampFile(name)} ${dir.fifo} floor`;
        return spawn("bash", ["-c", `${run}; ${run}`], { stdio: "ignore" });
      });
      gaps.push(...(await crashTogether(dir, names)));
      await Promise.all(shells.map((shell) => (shell.exitCode === null ? new Promise((done) => shell.once("exit", done)) : undefined)));
    }
  } finally {
    dir.cleanup();
  }
  return gaps;
}

async function agent(count: number): Promise<number[]> {
  const dir = new BenchDir();
  const agent = new BenchAgent(dir);
  const gaps: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const names = Array.from({ length: count }, (_, i) => `r${round}-p${i}`);
      for (const name of names) dir.renameIn(`${name}.yaml`, podManifest(name, dir, "crash"));
      gaps.push(...(await crashTogether(dir, names)));
      const removed = agent.count("PodRemoved");
      for (const name of names) rmSync(`${dir.manifests}/${name}.yaml`);
      await until("the round's pods to be removed", () => agent.count("PodRemoved") >= removed + count);
    }
  } finally {
    await agent.stop();
    dir.cleanup();
  }
  return gaps;
}

console.log(`exit -> next start, first restart, ${rounds} rounds (the machine is shared: compare with the floor of the same run)`);
console.log(`${"shell pair, 1 at a time".padEnd(34)} ${summary(await floor(1, rounds * 4))}`);
for (const count of sizes) {
  console.log(`${`shell pair, ${count} together`.padEnd(34)} ${summary(await floor(count))}`);
  console.log(`${`minikubelet, ${count} pods together`.padEnd(34)} ${summary(await agent(count))}`);
}
