/**
 * A state database with many events, for bench/big-db.ts: pods checkpointed by the real store (so
 * describe finds their records), then events added by one INSERT ... SELECT over a recursive CTE
 * in the rows' own shape (the store's per-event path would take minutes for a million; retention
 * would keep 1,000 a pod anyway).
 */
import { Database } from "bun:sqlite";
import { container, desired, pod } from "../test/pod-builder.ts";
import { storeHarness } from "../test/store-fixtures.ts";

export interface BigDbShape {
  /** Events of the one busy pod (`crash-lab`). */
  busyPodEvents: number;
  /** Events of the other pods together. */
  otherEvents: number;
  otherPods: number;
}

export async function fillBigDb(dir: string, shape: BigDbShape): Promise<string> {
  const h = storeHarness(dir);
  const pods = [pod({ name: "crash", containers: [container("crash")] }), ...Array.from({ length: shape.otherPods }, (_, i) => pod({ name: `web-${i}`, containers: [container("web")] }))];
  await h.kubelet.sync(desired(...pods));
  await h.kubelet.idle();
  await h.advance(5);
  h.kubelet.stop();
  h.agent.close();
  const db = new Database(h.dbPath);
  const now = h.clock.now();
  const rows = db.query("SELECT uid, namespace, name FROM pods ORDER BY name").all() as { uid: string; namespace: string; name: string }[];
  const busy = rows.find((row) => row.name === "crash-lab")!;
  const others = rows.filter((row) => row !== busy);
  const revision = (db.query("SELECT max(revision) AS r FROM events").get() as { r: number }).r;
  db.run("BEGIN");
  // One row a second back from `now`: the busy pod's events are its crash loop, oldest first.
  const fill = db.prepare(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
    INSERT INTO events (pod_uid, pod_key, namespace, pod, container, type, reason, message, count, first_at, last_at, revision, created_revision)
    SELECT ?2, ?3 || '/' || ?4, ?3, ?4, ?5,
      CASE i % 3 WHEN 0 THEN 'Warning' ELSE 'Normal' END,
      CASE i % 3 WHEN 0 THEN 'BackOff' WHEN 1 THEN 'Started' ELSE 'Created' END,
      CASE i % 3 WHEN 0 THEN 'Back-off restarting failed container ' || ?5 || ' in pod ' || ?4 || ' (attempt ' || i || ')'
                 ELSE 'Container ' || ?5 || ' attempt ' || i END,
      1 + i % 5, ?6 - (?1 - i) * 1000 - 4000, ?6 - (?1 - i) * 1000, ?7 + i, ?7 + i
    FROM n`);
  fill.run(shape.busyPodEvents, busy.uid, busy.namespace, busy.name, "crash", now, revision);
  const perPod = Math.ceil(shape.otherEvents / Math.max(1, others.length));
  others.forEach((row, k) => fill.run(perPod, row.uid, row.namespace, row.name, "web", now, revision + shape.busyPodEvents + k * perPod));
  db.run("COMMIT");
  // Readers should find the rows in the database file, as after the agent's checkpoints, not in a 300 MB WAL.
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return h.dbPath;
}
