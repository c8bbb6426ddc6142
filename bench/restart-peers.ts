/**
 * First restart of N crashing programs (issue 36's peer row), beside the supervisors people pick
 * instead of a node agent: Debian's supervisord (autorestart, startsecs=0, so an exit is restarted
 * at once rather than counted as a failed start) and runit (a runsv per program under one
 * runsvdir), minikubelet on the process runtime (compiled binary), and the floor, one shell running
 * the pair. Every program is the same bash script (stamps.ts): it stamps its first instruction,
 * waits with the others on one fifo, stamps and crashes together with them, and the gap to its next
 * first instruction is the figure. Each supervisor is started and stopped by its own pid.
 * Installs supervisor and runit with apt when they are missing and this runs as root.
 *   node_modules/.bin/bun bench/restart-peers.ts [PROGRAMS] [--rounds R]     (default: 10 programs, 3 rounds)
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BenchDir, agentRestarts, crashTogether, summary, until } from "./stamps.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 3;
const count = args.length > 0 ? Number(args[0]) : 10;

function program(dir: BenchDir, name: string, mode: "crash" | "floor"): string {
  return `bash ${dir.script} ${dir.stampFile(name)} ${dir.fifo} ${mode}`;
}

/** Runs `rounds` rounds of `count` programs under a supervisor `start` launches for each round's names; `stop` ends it. */
async function peer(start: (dir: BenchDir, names: string[]) => ChildProcess, stop: (child: ChildProcess) => Promise<void>): Promise<number[]> {
  const gaps: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const dir = new BenchDir();
    const names = Array.from({ length: count }, (_, i) => `p${round}-${i}`);
    const child = start(dir, names);
    try {
      gaps.push(...(await crashTogether(dir, names)));
    } finally {
      await stop(child);
      dir.cleanup();
    }
  }
  return gaps;
}

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((done) => child.once("exit", () => done())));

function supervisord(dir: BenchDir, names: string[]): ChildProcess {
  const conf = join(dir.path, "supervisord.conf");
  const programs = names.map(
    (name) => `[program:${name}]
command=${program(dir, name, "crash")}
autorestart=true
startsecs=0
startretries=100
stopsignal=KILL
stopasgroup=true
stdout_logfile=NONE
stderr_logfile=NONE
`,
  );
  writeFileSync(conf, `[supervisord]\nnodaemon=true\nlogfile=${join(dir.path, "supervisord.log")}\npidfile=${join(dir.path, "supervisord.pid")}\n\n${programs.join("\n")}`);
  return spawn("supervisord", ["-c", conf], { stdio: "ignore" });
}

/** SIGTERM: supervisord stops every program (stopsignal KILL to its group) before it exits. */
async function stopSupervisord(child: ChildProcess): Promise<void> {
  child.kill("SIGTERM");
  await exited(child);
}

function runsvdir(dir: BenchDir, names: string[]): ChildProcess {
  const services = join(dir.path, "service");
  for (const name of names) {
    const service = join(services, name);
    mkdirSync(service, { recursive: true });
    writeFileSync(join(service, "run"), `#!/bin/sh\nexec ${program(dir, name, "crash")}\n`);
    chmodSync(join(service, "run"), 0o755);
  }
  return spawn("runsvdir", [services], { stdio: "ignore", detached: true });
}

/** SIGHUP: runsvdir sends each runsv a TERM, which stops its program and exits; then its group is gone. */
async function stopRunsvdir(child: ChildProcess): Promise<void> {
  child.kill("SIGHUP");
  await exited(child);
  const pgid = child.pid!;
  await until("runit's services to stop", () => spawnSync("pgrep", ["-g", String(pgid)]).status !== 0, 10_000).catch(() => {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  });
}

async function shellPair(): Promise<number[]> {
  const gaps: number[] = [];
  for (let round = 0; round < rounds * 4; round++) {
    const dir = new BenchDir();
    const name = `pair-${round}`;
    const run = program(dir, name, "floor");
    const shell = spawn("bash", ["-c", `${run}; ${run}`], { stdio: "ignore" });
    try {
      gaps.push(...(await crashTogether(dir, [name])));
      await exited(shell);
    } finally {
      dir.cleanup();
    }
  }
  return gaps;
}

function ensureInstalled(command: string, pkg: string): boolean {
  if (Bun.which(command)) return true;
  if (process.getuid?.() !== 0 || !Bun.which("apt-get")) return false;
  // The packages' own services must not start: this bench starts, and stops, only its own.
  const policy = "/usr/sbin/policy-rc.d";
  const hadPolicy = existsSync(policy);
  if (!hadPolicy) writeFileSync(policy, "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  try {
    spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", pkg], { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  } finally {
    if (!hadPolicy) rmSync(policy, { force: true });
  }
  return Bun.which(command) !== null;
}

console.log(`exit -> next start, first restart, ${count} programs crashing together, ${rounds} rounds (the machine is shared: compare within the run)`);
console.log(`${"one shell pair (the floor)".padEnd(30)} ${summary(await shellPair())}`);
console.log(`${`minikubelet, ${count} pods`.padEnd(30)} ${summary(await agentRestarts(count, rounds))}`);
if (ensureInstalled("supervisord", "supervisor")) console.log(`${`supervisord, ${count} programs`.padEnd(30)} ${summary(await peer(supervisord, stopSupervisord))}`);
else console.log("supervisord: not installed (apt-get install supervisor)");
if (ensureInstalled("runsvdir", "runit")) console.log(`${`runit, ${count} services`.padEnd(30)} ${summary(await peer(runsvdir, stopRunsvdir))}`);
else console.log("runit: not installed (apt-get install runit)");
