/**
 * Manifest renamed into the directory -> the container's first instruction (issue 15), process
 * runtime, compiled binary: the bench notes the time, renames a whole pod file in, and the
 * container's first instruction stamps the clock. Each round is a new pod, removed afterwards.
 * The floor beside it: the same container spawned directly by the bench, timed the same way.
 *   node_modules/.bin/bun bench/rename-start.ts [--rounds R]     (default: 20 rounds)
 */
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BenchAgent, BenchDir, podManifest, summary, until } from "./stamps.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 20;

/** The wall clock in ms with the fraction the container's $EPOCHREALTIME stamp has too. */
const wallMs = () => performance.timeOrigin + performance.now();

async function floor(): Promise<number[]> {
  const dir = new BenchDir();
  const gaps: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const name = `floor-${round}`;
      const before = wallMs();
      const child = spawn("bash", [dir.script, dir.stampFile(name), dir.fifo, "sleep"], { stdio: "ignore" });
      await until("the container's first stamp", () => dir.readStamps(name).length > 0);
      gaps.push(dir.readStamps(name)[0]!.ms - before);
      child.kill("SIGKILL");
    }
  } finally {
    dir.cleanup();
  }
  return gaps;
}

async function agent(): Promise<number[]> {
  const dir = new BenchDir();
  const agent = new BenchAgent(dir);
  const gaps: number[] = [];
  try {
    // One pod first, so the agent has started up and adopted before the first timed rename.
    writeFileSync(join(dir.manifests, "warm.yaml"), podManifest("warm", dir, "sleep"));
    await until("the agent's first pod", () => dir.readStamps("warm").length > 0);
    for (let round = 0; round < rounds; round++) {
      const name = `r${round}`;
      const renameIn = dir.stage(`${name}.yaml`, podManifest(name, dir, "sleep"));
      const before = wallMs();
      renameIn();
      await until("the container's first stamp", () => dir.readStamps(name).length > 0);
      gaps.push(dir.readStamps(name)[0]!.ms - before);
      const removed = agent.count("PodRemoved");
      rmSync(join(dir.manifests, `${name}.yaml`));
      await until("the pod's removal", () => agent.count("PodRemoved") > removed);
    }
  } finally {
    await agent.stop();
    dir.cleanup();
  }
  return gaps;
}

console.log(`manifest renamed in -> first instruction, ${rounds} rounds (the machine is shared: compare with the floor of the same run)`);
console.log(`${"floor: the bench spawns it".padEnd(30)} ${summary(await floor())}`);
console.log(`${"minikubelet".padEnd(30)} ${summary(await agent())}`);
