/**
 * Exit -> next start of a crashing container (issue 15), process runtime, compiled binary, measured
 * from outside: each container stamps the clock as its last instruction before it crashes and as
 * the first of its next run; the figure is the gap. N pods crash together (they all wait on one
 * fifo, and the bench ends every wait at once). Each round runs new pods, and its row is their
 * first restart, which the kubelet makes at once.
 * The floor beside it: a shell running the same pair (the container, then the container again),
 * alone and N at a time, triggered the same way.
 *   node_modules/.bin/bun bench/restart-latency.ts [PODS...] [--rounds R]     (default: 40 5, 5 rounds)
 * The last size runs once more as a crash loop: the restart after its third crash, with the back-off
 * cut to a millisecond, which also replaces the dead container kept before.
 */
import { spawn } from "node:child_process";
import { BenchDir, LOOP_CRASHES, agentRestarts, crashTogether, summary } from "./stamps.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 5;
const sizes = args.length > 0 ? args.map(Number) : [40, 5];

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

console.log(`exit -> next start, first restart, ${rounds} rounds (the machine is shared: compare with the floor of the same run)`);
console.log(`${"shell pair, 1 at a time".padEnd(34)} ${summary(await floor(1, rounds * 4))}`);
for (const count of sizes) {
  console.log(`${`shell pair, ${count} together`.padEnd(34)} ${summary(await floor(count))}`);
  console.log(`${`minikubelet, ${count} pods together`.padEnd(34)} ${summary(await agentRestarts(count, rounds))}`);
}
// A crash loop's later restart: it also replaces the dead container kept for `logs --previous`. The
// back-off is cut to a millisecond, so the gap is the agent's work and one timer, not the wait.
const loop = sizes.at(-1)!;
console.log(
  `${`minikubelet, ${loop} pods, restart ${LOOP_CRASHES}`.padEnd(34)} ${summary(await agentRestarts(loop, rounds, { loop: true, flags: ["--backoff-base", "0.001", "--backoff-max", "0.001"] }))}  (back-off 1 ms)`,
);
