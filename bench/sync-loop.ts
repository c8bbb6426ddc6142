/**
 * How long a pass takes and what a pod costs, for the loop on the fake runtime with the real SQLite
 * store on disk: the first pass (create N pods), a steady resync (nothing changed), and a crash
 * storm (every pod's container exits at once). Prints figures; asserts nothing.
 *   bun bench/sync-loop.ts [PODS]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeHarness } from "../test/store-fixtures.ts";
import { container, desired, pod } from "../test/pod-builder.ts";

const count = Number(process.argv[2] ?? 1000);
const dir = mkdtempSync(join(tmpdir(), "mk-bench-"));
const h = storeHarness(dir);
const pods = Array.from({ length: count }, (_, i) => pod({ name: `p${i}`, containers: [container("app")] }));
const want = desired(...pods);

async function timed(label: string, work: () => Promise<void>): Promise<void> {
  const before = performance.now();
  await work();
  const ms = performance.now() - before;
  console.log(`${label.padEnd(34)} ${ms.toFixed(1).padStart(8)} ms   ${((ms * 1000) / count).toFixed(0).padStart(6)} µs/pod`);
}

Bun.gc(true);
const heapBefore = process.memoryUsage().heapUsed;
await timed(`first pass (${count} pods)`, () => h.kubelet.sync(want));
await timed("steady resync (nothing changed)", () => h.kubelet.sync(want));
await timed("crash storm (every container exits)", async () => {
  for (const c of [...h.runtime.containers.values()]) h.runtime.finish(c.id, 1);
  await h.kubelet.idle();
});
for (let round = 0; round < 5; round++) await h.kubelet.sync(want);
await timed("resync after 5 more passes", () => h.kubelet.sync(want));
Bun.gc(true);
const heapAfter = process.memoryUsage().heapUsed;
console.log(`heap per pod                       ${((heapAfter - heapBefore) / count / 1024).toFixed(1).padStart(8)} KiB`);
console.log(`database size                      ${(statSync(h.dbPath).size / 1024 / 1024).toFixed(1).padStart(8)} MiB (+ WAL)`);
h.kubelet.stop();
h.agent.close();
rmSync(dir, { recursive: true, force: true });
