/**
 * Whether scraping the kubelet's endpoints slows the loop: the loop's pass time (a resync of N pods,
 * then a crash storm, on the fake runtime with the real store on disk) while a client scrapes
 * /metrics, /metrics/probes and /pods over the real TLS listener every 100 ms, next to the floor:
 * the same passes in the same run with no scraping. Also what one scrape costs. Asserts nothing.
 *   bun bench/kubelet-scrape.ts [PODS] [SECONDS per phase]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiDirOf, loadCredentials } from "../src/api/http/tls.ts";
import { KubeletMetrics } from "../src/server/metrics.ts";
import { startKubeletServer } from "../src/server/start.ts";
import { container, desired, pod } from "../test/pod-builder.ts";
import { storeHarness } from "../test/store-fixtures.ts";

const count = Number(process.argv[2] ?? 300);
const phaseMs = Number(process.argv[3] ?? 3) * 1000;
const dir = mkdtempSync(join(tmpdir(), "mk-bench-scrape-"));
const h = storeHarness(dir);
const want = desired(...Array.from({ length: count }, (_, i) => pod({ name: `p${i}`, containers: [container("app")] })));
await h.kubelet.sync(want);
const server = startKubeletServer({
  dbPath: h.dbPath,
  listen: { hostname: "127.0.0.1", port: 0 },
  nodeName: "lab",
  commits: { subscribe: () => () => {} },
  runtime: h.runtime,
  clock: h.clock,
  servedPods: () => h.kubelet.servedPods(),
  metrics: new KubeletMetrics({ pods: () => h.kubelet.pods.values() }),
  configz: { kubeletconfig: {} },
  syncLoop: { lastIteration: () => h.clock.now(), thresholdMs: 300_000 },
});
const credentials = loadCredentials(apiDirOf(h.dbPath));
const headers = { Authorization: `Bearer ${credentials.token}` };

/** Passes for `phaseMs`, each timed: a resync of every pod, then every container crashing at once. */
async function passes(): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + phaseMs;
  while (performance.now() < end) {
    let before = performance.now();
    await h.kubelet.sync(want);
    times.push(performance.now() - before);
    before = performance.now();
    for (const c of [...h.runtime.containers.values()]) if (c.state === "running") h.runtime.finish(c.id, 1);
    await h.kubelet.idle();
    times.push(performance.now() - before);
  }
  return times;
}

const scrapes: number[] = [];
let scraping = false;
async function scrapeOnce(): Promise<void> {
  const before = performance.now();
  for (const path of ["/metrics", "/metrics/probes", "/pods"]) await (await fetch(`${server.url}${path}`, { headers, tls: { ca: credentials.caPem } })).arrayBuffer();
  scrapes.push(performance.now() - before);
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `median ${at(0.5).toFixed(1).padStart(7)} ms   p95 ${at(0.95).toFixed(1).padStart(7)} ms   max ${sorted.at(-1)!.toFixed(1).padStart(7)} ms`;
};

await passes(); // warm-up
const floor = await passes();
const timer = setInterval(() => {
  if (scraping) return;
  scraping = true;
  void scrapeOnce().finally(() => (scraping = false));
}, 100);
const scraped = await passes();
clearInterval(timer);
while (scraping) await new Promise((done) => setTimeout(done, 10));
const duringPasses = [...scrapes];
// Scrapes alone, the loop idle: the cost of one scrape of the three endpoints.
const idle: number[] = [];
for (let i = 0; i < 20; i++) {
  const before = performance.now();
  await scrapeOnce();
  idle.push(performance.now() - before);
}

console.log(`${count} pods, ${phaseMs / 1000} s of passes per phase (resyncs and crash storms, alternating)`);
console.log(`pass, no scraping (floor)          ${stats(floor)}   (${floor.length} passes)`);
console.log(`pass, scraping every 100 ms        ${stats(scraped)}   (${scraped.length} passes, ${duringPasses.length} scrapes)`);
console.log(`one scrape while the loop passes   ${stats(duringPasses)}`);
console.log(`one scrape, the loop idle          ${stats(idle)}`);
await server.stop();
h.kubelet.stop();
h.agent.close();
rmSync(dir, { recursive: true, force: true });
