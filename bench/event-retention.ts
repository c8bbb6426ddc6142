/**
 * What retention costs with a full history: PODS pods each at the 1000-event cap in a database on
 * disk. Prints, each beside its floor measured in the same run:
 * - writing new events to pods at their cap (each insert also deletes the pod's oldest row) next to
 *   writing them to pods under it (the insert alone);
 * - the timer's expiry pass when nothing has expired next to the old pass's GROUP BY over every
 *   event (what finding the pods over their cap cost once a minute before).
 * Medians of REPEATS runs; asserts nothing.
 *   bun bench/event-retention.ts [PODS] [REPEATS]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeEvent } from "../src/v1/kube-event.ts";
import { openAgentDatabase } from "../src/store/open.ts";
import { SqliteStore } from "../src/store/pod-store.ts";
import { FakeClock } from "../test/fake-clock.ts";

const pods = Number(process.argv[2] ?? 200);
const repeats = Number(process.argv[3] ?? 5);
const CAP = 1000;
const BATCH = 100;
const CALLS = 20;

const dir = mkdtempSync(join(tmpdir(), "mk-bench-retention-"));
const agent = openAgentDatabase(join(dir, "state.db"));
const clock = new FakeClock();
const store = new SqliteStore({ db: agent.db, clock, retention: { maxEventsPerPod: CAP, intervalMs: Number.MAX_SAFE_INTEGER } });

const insert = agent.db.prepare(
  "INSERT INTO events (pod_uid, pod_key, namespace, pod, container, type, reason, message, count, first_at, last_at, revision) VALUES (?1, ?1, 'default', ?1, 'c', 'Normal', 'R', ?2, 1, ?3, ?3, ?4)",
);
agent.db.transaction(() => {
  let revision = 0;
  for (let p = 0; p < pods; p++) for (let i = 0; i < CAP; i++) insert.run(`full-${p}`, `old ${i}`, clock.now() - CAP + i, ++revision);
})();

let serial = 0;
function events(uid: string): KubeEvent[] {
  return Array.from({ length: BATCH }, () => ({
    at: clock.now(),
    type: "Normal" as const,
    reason: "Unhealthy",
    podKey: `default/${uid}`,
    namespace: "default",
    pod: uid,
    podUid: uid,
    container: "c",
    message: `probe output ${++serial}`,
  }));
}

/** µs per event for CALLS transactions of BATCH new events, spread over the pods. */
function writeCost(prefix: string): number {
  const before = performance.now();
  for (let call = 0; call < CALLS; call++) store.saveEvents(events(`${prefix}-${call % pods}`));
  return ((performance.now() - before) * 1000) / (CALLS * BATCH);
}

function timeMs(work: () => void): number {
  const before = performance.now();
  work();
  return performance.now() - before;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const groupBy = agent.db.prepare("SELECT pod_uid FROM events GROUP BY pod_uid HAVING count(*) > ?");
const atCap: number[] = [];
const underCap: number[] = [];
const expiry: number[] = [];
const oldScan: number[] = [];
for (let run = 0; run < repeats; run++) {
  underCap.push(writeCost(`fresh${run}`));
  atCap.push(writeCost("full"));
  expiry.push(timeMs(() => store.prune()));
  oldScan.push(timeMs(() => groupBy.all(CAP)));
}
const total = (agent.db.query("SELECT count(*) AS n FROM events").get() as { n: number }).n;
console.log(`${total} events, ${pods} pods at the ${CAP} cap; medians of ${repeats} runs (the machine is shared: compare ratios)`);
console.log(`new event, pod at its cap (insert + delete oldest)   ${median(atCap).toFixed(1).padStart(8)} µs/event`);
console.log(`new event, pod under its cap (insert only: floor)    ${median(underCap).toFixed(1).padStart(8)} µs/event`);
console.log(`expiry pass, nothing expired (the timer, per minute) ${median(expiry).toFixed(3).padStart(8)} ms`);
console.log(`old pass: GROUP BY over every event (floor it beat)  ${median(oldScan).toFixed(3).padStart(8)} ms`);
agent.close();
rmSync(dir, { recursive: true, force: true });
