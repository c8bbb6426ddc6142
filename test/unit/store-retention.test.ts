/**
 * What keeps the database bounded (issue 14): a pod's events capped as they are written, expiry in
 * batches on a timer, deleted pods and attempts capped, and every retention statement driven by an
 * index whatever the history holds. The clock is the harness's fake one.
 */
import { describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import { retentionOptions } from "../../src/cli/options.ts";
import { openReadonlyDatabase } from "../../src/store/open.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { RETENTION_SQL } from "../../src/store/write-statements.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

function event(podUid: string, message: string, at: number): KubeEvent {
  return { at, type: "Warning", reason: "Unhealthy", podKey: `default/${podUid}`, namespace: "default", pod: podUid, podUid, container: "web", message };
}

const count = (db: Database, sql: string, ...params: (string | number)[]) => (db.query(`SELECT count(*) AS n FROM ${sql}`).get(...params) as { n: number }).n;

describe("a pod's events are capped as they are written", () => {
  test("the newest N by last occurrence stay, a repeat counts as new, another pod is untouched, the deleted revisions are compacted", () => {
    using dir = tempDir();
    const h = storeHarness(dir.path, { retention: { maxEventsPerPod: 3 } });
    const t0 = h.clock.now();
    for (let i = 0; i < 5; i++) h.store.saveEvents([event("a", `probe output ${i}`, t0 + i * 1000)]);
    h.store.saveEvents([event("b", "other 0", t0), event("b", "other 1", t0)]);
    const messages = (uid: string) =>
      (h.agent.db.query("SELECT message FROM events WHERE pod_uid = ? ORDER BY last_at, id").all(uid) as { message: string }[]).map((r) => r.message);
    expect(messages("a")).toEqual(["probe output 2", "probe output 3", "probe output 4"]);
    // A repeat of the oldest makes it the newest: the next new row pushes out the one after it.
    h.store.saveEvents([event("a", "probe output 2", t0 + 10_000)]);
    h.store.saveEvents([event("a", "probe output 5", t0 + 11_000)]);
    expect(messages("a")).toEqual(["probe output 4", "probe output 2", "probe output 5"]);
    expect(messages("b")).toEqual(["other 0", "other 1"]);
    expect(h.agent.db.query("SELECT pod_uid, events FROM event_counts ORDER BY pod_uid").all()).toEqual([
      { pod_uid: "a", events: 3 },
      { pod_uid: "b", events: 2 },
    ]);
    const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
    expect(reader.compactedRevision()).toBeGreaterThan(0);
    reader.db.close();
    h.agent.close();
  });
});

describe("expiry on the timer", () => {
  test("events and deleted pods past the TTL go; the pod's attempts and back-off go with its row; a live pod's stay", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path, { retention: { eventTtlMs: 120_000, intervalMs: 60_000 } });
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] }), pod({ name: "web" })));
    await h.advance(30);
    const crashUid = (h.agent.db.query("SELECT uid FROM pods WHERE name = 'crash-lab'").get() as { uid: string }).uid;
    expect(count(h.agent.db, "attempts WHERE pod_uid = ?", crashUid)).toBeGreaterThan(1);
    await h.kubelet.sync(desired(pod({ name: "web" })));
    await h.advance(5);
    expect(count(h.agent.db, "pods WHERE deleted_at IS NOT NULL")).toBe(1);
    // Inside the TTL: describe and events still have the deleted pod.
    h.store.prune();
    expect(count(h.agent.db, "attempts WHERE pod_uid = ?", crashUid)).toBeGreaterThan(1);
    await h.advance(130);
    await h.kubelet.sync(desired(pod({ name: "web" }))); // a pass, though it writes nothing for the quiet pod
    expect(count(h.agent.db, "pods WHERE uid = ?", crashUid)).toBe(0);
    expect(count(h.agent.db, "attempts WHERE pod_uid = ?", crashUid)).toBe(0);
    expect(count(h.agent.db, "backoff WHERE pod_uid = ?", crashUid)).toBe(0);
    expect(count(h.agent.db, "events WHERE pod_uid = ?", crashUid)).toBe(0);
    expect(count(h.agent.db, "attempts WHERE pod_uid <> ?", crashUid)).toBe(1);
    h.kubelet.stop();
    h.agent.close();
  });

  test("a pass deletes one batch per table; a full batch has the next save go on at once, not an interval later", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path, { retention: { eventTtlMs: 60_000, intervalMs: 3_600_000, batch: 2 } });
    const t0 = h.clock.now();
    h.store.saveEvents([0, 1, 2, 3, 4].map((i) => event("a", `m${i}`, t0)));
    h.clock.step(120_000);
    expect([h.store.prune().events, h.store.prune().events, h.store.prune().events]).toEqual([2, 2, 1]);
    h.store.saveEvents([0, 1, 2].map((i) => event("a", `n${i}`, h.clock.now())));
    h.clock.step(120_000);
    expect(h.store.prune().events).toBe(2);
    // The batch was full: the next save prunes again, though the interval is an hour.
    await h.kubelet.sync(desired(pod({ name: "web" })));
    expect(count(h.agent.db, "events WHERE pod_uid = 'a'")).toBe(0);
    h.kubelet.stop();
    h.agent.close();
  });

  test("deleted pods beyond the cap go, the earliest deleted first", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path, { retention: { maxDeletedPods: 2 } });
    for (const name of ["one", "two", "three", "four"]) {
      await h.kubelet.sync(desired(pod({ name })));
      await h.kubelet.sync(desired());
      await h.advance(1);
    }
    expect(h.store.prune().pods).toBe(2);
    expect(h.agent.db.query("SELECT name FROM pods ORDER BY deleted_at").all()).toEqual([{ name: "three-lab" }, { name: "four-lab" }]);
    h.kubelet.stop();
    h.agent.close();
  });
});

test("expiry follows any write, a pod's deletion included; its failure is reported, not the write's, and tried again after the next", async () => {
  using dir = tempDir();
  const logged: string[] = [];
  const h = storeHarness(dir.path, { retention: { eventTtlMs: 60_000, intervalMs: 60_000 }, log: (line) => logged.push(line) });
  h.store.saveEvents([event("a", "old", h.clock.now())]);
  await h.kubelet.sync(desired(pod({ name: "web" })));
  h.clock.step(120_000);
  h.agent.db.run("CREATE TRIGGER refuse BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'injected'); END");
  await h.kubelet.sync(desired());
  await h.advance(1);
  expect(count(h.agent.db, "pods WHERE deleted_at IS NOT NULL")).toBe(1);
  expect(logged).toEqual([expect.stringContaining("pruning expired events and deleted pods failed: injected")]);
  h.agent.db.run("DROP TRIGGER refuse");
  h.store.saveEvents([event("b", "new", h.clock.now())]);
  expect(count(h.agent.db, "events WHERE pod_uid = 'a'")).toBe(0);
  h.kubelet.stop();
  h.agent.close();
});

test("a container keeps its newest 100 attempts", () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  const insert = h.agent.db.prepare("INSERT INTO attempts (pod_uid, container, attempt, runtime_id) VALUES (?, ?, ?, '')");
  for (let attempt = 0; attempt < 150; attempt++) insert.run("p", "crash", attempt);
  insert.run("p", "other", 0);
  expect(h.agent.db.query("SELECT min(attempt) AS first, max(attempt) AS last, count(*) AS n FROM attempts WHERE container = 'crash'").get()).toEqual({
    first: 50,
    last: 149,
    n: 100,
  });
  expect(count(h.agent.db, "attempts WHERE container = 'other'")).toBe(1);
  h.agent.close();
});

test("with a large history every retention statement walks an index, never the table or a sort", () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  const db = h.agent.db;
  db.transaction(() => {
    const insert = db.prepare(
      "INSERT INTO events (pod_uid, pod_key, namespace, pod, container, type, reason, message, count, first_at, last_at, revision) VALUES (?1, ?1, 'default', ?1, 'c', 'Normal', 'R', ?2, 1, ?3, ?3, ?4)",
    );
    for (let i = 0; i < 20_000; i++) insert.run(`pod-${i % 200}`, `message ${i}`, i, i + 1);
  })();
  db.run("ANALYZE");
  for (const [name, sql] of Object.entries(RETENTION_SQL)) {
    const plan = (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...sql.split("?").slice(1).map(() => 1)) as { detail: string }[]).map((row) => row.detail);
    expect({ name, scans: plan.filter((detail) => /^SCAN|TEMP B-TREE/.test(detail)) }).toEqual({ name, scans: [] });
  }
  h.agent.close();
});

test("run's retention flags: Go durations for the TTL, the defaults when absent", () => {
  expect(retentionOptions({})).toEqual({ eventTtlMs: 24 * 3_600_000, maxEventsPerPod: 1000 });
  expect(retentionOptions({ eventTtl: "1h30m", maxEventsPerPod: "50" })).toEqual({ eventTtlMs: 5_400_000, maxEventsPerPod: 50 });
  expect(retentionOptions({ eventTtl: "90s", maxEventsPerPod: 7 })).toEqual({ eventTtlMs: 90_000, maxEventsPerPod: 7 });
});
