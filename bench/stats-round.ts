/**
 * What a round of the stats collector costs the agent's thread: N containers on a fake cgroup v1
 * tree (the files the process runtime reads), read as the collector reads them. Prints, for each
 * of ROUNDS rounds, the round's length, the longest stall a 1 ms timer saw during it (what the
 * loop would wait at worst) beside the longest stall over an idle stretch as long (the floor), and
 * the time to draw the Summary and /metrics/resource (once per round, however often scraped).
 * Asserts nothing.
 *   bun bench/stats-round.ts [CONTAINERS] [ROUNDS]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cgroups, detectCgroupMode } from "../src/runtime/process/cgroups.ts";
import { readCgroupUsage } from "../src/runtime/process/cgroup-usage.ts";
import { StatsCollector } from "../src/stats/collector.ts";
import type { V1Pod } from "../src/v1/v1.ts";
import { fakeV1 } from "../test/cgroup-fixtures.ts";
import { FakeClock } from "../test/fake-clock.ts";

const count = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 5);

const root = mkdtempSync(join(tmpdir(), "mk-bench-stats-"));
const mounts = fakeV1(root);
mkdirSync(join(root, "cpuacct"));
const cgroups = new Cgroups(detectCgroupMode(`${mounts}\n40 31 0:40 / ${join(root, "cpuacct")} rw,relatime - cgroup cgroup rw,cpuacct`), "bench");
cgroups.prepare();
const pods: V1Pod[] = [];
for (let i = 0; i < count; i++) {
  const id = `c${i}`;
  cgroups.create(id, {});
  const dirs = cgroups.usageDirs(id) as { memory: string; cpuacct: string };
  writeFileSync(join(dirs.cpuacct, "cpuacct.usage"), `${i * 1_000_000}\n`);
  writeFileSync(join(dirs.memory, "memory.usage_in_bytes"), "5000000\n");
  // A real memory.stat has some 35 lines.
  writeFileSync(join(dirs.memory, "memory.stat"), Array.from({ length: 35 }, (_, n) => `total_field${n} ${n}\n`).join("") + "total_rss 100\ntotal_inactive_file 200\n");
  writeFileSync(join(dirs.memory, "memory.limit_in_bytes"), "9223372036854771712\n");
  pods.push({
    metadata: { name: `p${i}`, namespace: "default", uid: `u${i}` },
    spec: { containers: [] } as unknown as V1Pod["spec"],
    status: { phase: "Running", containerStatuses: [{ name: "c", ready: true, restartCount: 0, containerID: `process://${id}`, state: { running: { startedAt: "2026-01-01T00:00:00Z" } } }] },
  });
}
const clock = new FakeClock();
const runtime = { containerUsage: (id: string) => readCgroupUsage(cgroups.usageDirs(id)!, clock.now()) };
const stats = new StatsCollector({ nodeName: "bench", runtime, pods: () => pods, clock, node: { fsPath: root } });

/** The longest gap between ticks of a 1 ms timer while `work` runs. */
async function longestStall(work: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  await work();
  clearInterval(timer);
  return Math.max(worst, performance.now() - last);
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
for (let round = 0; round < rounds; round++) {
  clock.step(10_000);
  const started = performance.now();
  const stall = await longestStall(() => stats.sample());
  const length = performance.now() - started;
  const floor = await longestStall(() => new Promise((done) => setTimeout(done, length)));
  const drawStart = performance.now();
  await stats.summary();
  const summaryMs = performance.now() - drawStart;
  const metricsStart = performance.now();
  await stats.resourceMetrics();
  const metricsMs = performance.now() - metricsStart;
  console.log(`${count} containers, round ${round}: ${ms(length)}; longest stall ${ms(stall)} (idle floor ${ms(floor)}); Summary ${ms(summaryMs)}, /metrics/resource ${ms(metricsMs)}`);
}
rmSync(root, { recursive: true, force: true });
