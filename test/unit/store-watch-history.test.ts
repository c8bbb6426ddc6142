import { describe, expect, test } from "bun:test";
import { openReadonlyDatabase } from "../../src/store/open.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

/** What the API's watch reads from the store (migrations/0004): creation revisions, history, compaction. */
describe("watch history in the store", () => {
  test("a row keeps the revision that created it; a repeat or a change raises only its revision", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
    const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
    const created = reader.livePods()[0]!.createdRevision;
    await h.advance(30);
    const [row] = reader.livePods();
    expect(row!.createdRevision).toBe(created);
    expect(row!.revision).toBeGreaterThan(created);
    const backOff = reader.events().find((e) => e.reason === "BackOff")!;
    expect(backOff.count).toBeGreaterThan(1);
    expect(backOff.revision).toBeGreaterThan(backOff.createdRevision);
    reader.db.close();
    h.agent.close();
  });

  test("eventsChangedSince pages through changes in revision order", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
    await h.advance(30);
    const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
    const all = reader.eventsChangedSince(0, 10_000);
    const paged = [];
    for (let page = reader.eventsChangedSince(0, 2); page.length > 0; page = reader.eventsChangedSince(page.at(-1)!.revision, 2)) paged.push(...page);
    expect(paged).toEqual(all);
    expect(all.map((e) => e.revision)).toEqual(all.map((e) => e.revision).sort((a, b) => a - b));
    reader.db.close();
    h.agent.close();
  });

  test("pruning records the highest revision it deleted, and revisions never go back after it", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path, { retention: { eventTtlMs: 120_000, intervalMs: 60 * 60_000 } });
    const web = pod({ name: "web" });
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired());
    await h.advance(35);
    const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
    const top = reader.revision();
    expect(reader.compactedRevision()).toBe(0);
    h.kubelet.stop();
    h.clock.step(10 * 60_000);
    expect(h.store.prune()).toEqual({ events: expect.any(Number), pods: 1 });
    // The deleted pod's row carried the highest revision: it is gone, and still counted.
    expect(reader.compactedRevision()).toBe(top);
    expect(reader.revision()).toBe(top);
    reader.db.close();
    h.agent.close();
  });
});

test("a deleted pod's uid written back (its manifest restored) is created again: a watch sees it ADDED", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  const web = pod({ name: "web" });
  await h.kubelet.sync(desired(web));
  const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
  const first = reader.livePods()[0]!.createdRevision;
  await h.kubelet.sync(desired());
  await h.advance(35);
  expect(reader.livePods()).toEqual([]);
  await h.kubelet.sync(desired(web));
  await h.advance(1);
  const [revived] = reader.livePods();
  expect(revived!.uid).toBe(web.uid);
  expect(revived!.createdRevision).toBeGreaterThan(first);
  reader.db.close();
  h.agent.close();
});
