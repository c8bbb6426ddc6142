import { describe, expect, test } from "bun:test";
import type { BackoffEntry } from "../../src/kubelet/backoff.ts";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import type { PodStateSink } from "../../src/kubelet/kubelet.ts";
import type { PodRecord } from "../../src/kubelet/pod-state.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

/** A store whose writes throw while `failing` is set, as on a full disk or a read-only file system. */
class FlakyStore implements PodStateSink {
  failing: string | undefined;
  failDeletes: string | undefined;
  readonly saves: { at: number; uid: string; events: KubeEvent[] }[] = [];
  readonly failedSaves: number[] = [];
  readonly deletes: { uid: string; events: KubeEvent[] }[] = [];

  constructor(private readonly now: () => number) {}

  savePod(pod: PodRecord, _object: unknown, events: KubeEvent[], _backoff: BackoffEntry[]): void {
    if (this.failing) {
      this.failedSaves.push(this.now());
      throw new Error(this.failing);
    }
    this.saves.push({ at: this.now(), uid: pod.spec.uid, events: [...events] });
  }

  deletePod(pod: PodRecord, _object: unknown, events: KubeEvent[]): void {
    if (this.failDeletes) throw new Error(this.failDeletes);
    this.deletes.push({ uid: pod.spec.uid, events: [...events] });
  }

  savedReasons(): string[] {
    return this.saves.flatMap((s) => s.events.map((e) => `${e.reason} ${e.container}`.trimEnd()));
  }
}

function setup() {
  let now = () => 0;
  const store = new FlakyStore(() => now());
  const h = harness({ store, baseSeconds: 10, capSeconds: 300 });
  now = () => h.clock.now();
  return { h, store };
}

describe("a failing state write", () => {
  test("does not stop the pod's worker: one Warning, retries with back-off, and the pod syncs again once the disk is back", async () => {
    const { h, store } = setup();
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    store.failing = "disk I/O error (SQLITE_FULL)";
    const start = h.clock.now();
    await h.advance(60);
    // The crash loop went on while nothing could be saved: the pod was never given up.
    expect(h.runtime.startsOf("crash")).toBeGreaterThan(2);
    expect(h.lines((e) => e.reason === "FailedSync")).toEqual(["1.0s FailedSync"]);
    expect(h.events.find((e) => e.reason === "FailedSync")!.message).toBe("error syncing pod: disk I/O error (SQLITE_FULL)");
    // Retries back off: gaps between failed writes on the retry timer grow.
    const retries = store.failedSaves.map((at) => (at - start) / 1000);
    expect(retries.length).toBeGreaterThan(3);
    expect(retries.length).toBeLessThan(40);

    store.failing = undefined;
    const savedBefore = store.saves.length;
    await h.advance(120);
    expect(store.saves.length).toBeGreaterThan(savedBefore);
    // Nothing emitted while the disk was full is lost: it is saved with the next successful write.
    const saved = store.savedReasons();
    expect(saved).toContain("FailedSync");
    const exitedEmitted = h.events.filter((e) => e.reason === "Exited").length;
    expect(saved.filter((r) => r === "Exited crash").length).toBe(exitedEmitted);
  });

  test("a write that fails again with the same error is not reported again, a new error is", async () => {
    const { h, store } = setup();
    await h.kubelet.sync(desired(pod()));
    store.failing = "attempt to write a readonly database";
    h.kubelet.requestSync("demo/web-lab");
    await h.advance(30);
    store.failing = "disk I/O error";
    await h.advance(120);
    expect(h.events.filter((e) => e.reason === "FailedSync").map((e) => e.message)).toEqual([
      "error syncing pod: attempt to write a readonly database",
      "error syncing pod: disk I/O error",
    ]);
    store.failing = undefined;
    await h.advance(300);
    store.failing = "disk I/O error";
    h.kubelet.requestSync("demo/web-lab");
    await h.advance(10);
    // After a success, the same failure is news again.
    expect(h.events.filter((e) => e.reason === "FailedSync").length).toBe(3);
  });

  test("the retry is armed even when the error report cannot be saved either", async () => {
    const { h, store } = setup();
    await h.kubelet.sync(desired(pod()));
    store.failing = "disk full";
    h.runtime.finish(h.runtime.running("web")!.id, 0);
    await h.kubelet.idle();
    store.failing = undefined;
    const saves = store.saves.length;
    // Nothing else wakes the pod: only the retry can save what the failed pass did.
    await h.advance(10);
    expect(store.saves.length).toBeGreaterThan(saves);
    expect(store.savedReasons()).toEqual(expect.arrayContaining(["Exited web", "FailedSync"]));
  });
});

describe("a failing store while removing a pod", () => {
  test("a pod that comes back after its removal reports a failure its predecessor already reported", async () => {
    const { h, store } = setup();
    await h.kubelet.sync(desired(pod()));
    store.failing = "disk I/O error";
    h.kubelet.requestSync("demo/web-lab");
    await h.advance(1);
    // Removed while its saves still fail (its removal is recorded: deletes work).
    await h.kubelet.sync(desired());
    await h.advance(5);
    expect(h.kubelet.pods.size).toBe(0);
    await h.kubelet.sync(desired(pod({ revision: 2 })));
    await h.advance(1);
    expect(h.events.filter((e) => e.reason === "FailedSync").map((e) => e.podUid)).toEqual(["uid-web-1", "uid-web-2"]);
  });


  test("a removal the store refused is written again by itself, with no other pod left to sync", async () => {
    const { h, store } = setup();
    await h.kubelet.sync(desired(pod()));
    store.failDeletes = "database or disk is full";
    await h.kubelet.sync(desired());
    await h.advance(5);
    expect(h.kubelet.pods.size).toBe(0);
    expect(store.deletes).toEqual([]);
    store.failDeletes = undefined;
    await h.advance(5);
    expect(store.deletes.map((d) => d.uid)).toEqual(["uid-web-1"]);
  });

  test("shutdown still completes", async () => {
    const { h, store } = setup();
    await h.kubelet.sync(desired(pod()));
    store.failDeletes = "disk I/O error";
    let done = false;
    const shutdown = h.kubelet.shutdown().then(() => (done = true));
    await h.advance(60);
    expect(h.kubelet.pods.size).toBe(0);
    expect(done).toBe(true);
    await shutdown;
  });

  test("the replacement of a changed pod is started, and the removal is recorded once the store is back", async () => {
    const { h, store } = setup();
    await h.kubelet.sync(desired(pod({ revision: 1 })));
    store.failDeletes = "disk I/O error";
    await h.kubelet.sync(desired(pod({ revision: 2 })));
    await h.advance(5);
    expect(h.pod("demo/web-lab")?.spec.uid).toBe("uid-web-2");
    expect(h.runtime.running("web")?.config.pod.uid).toBe("uid-web-2");
    expect(store.deletes).toEqual([]);
    store.failDeletes = undefined;
    h.kubelet.requestSync("demo/web-lab");
    await h.advance(5);
    expect(store.deletes.map((d) => d.uid)).toEqual(["uid-web-1"]);
    // The last pass's events and the report of the failed write, saved with the removal.
    expect(store.deletes[0]!.events.map((e) => e.reason)).toEqual(["Exited", "FailedSync"]);
  });
});

describe("the SQLite store refusing writes (a read-only database)", () => {
  test("pods keep running, one FailedSync, and what happened meanwhile is in the database once writes work again", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path, { baseSeconds: 1, capSeconds: 4 });
    h.runtime.behaviours.set("crash", { exitAfterMs: 500, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    h.agent.db.run("PRAGMA query_only = ON");
    await h.advance(20);
    const failed = h.events.filter((e) => e.reason === "FailedSync");
    expect(failed.map((e) => e.message)).toEqual(["error syncing pod: attempt to write a readonly database"]);
    const startsWhileReadOnly = h.runtime.startsOf("crash");
    expect(startsWhileReadOnly).toBeGreaterThan(3);

    h.agent.db.run("PRAGMA query_only = OFF");
    await h.advance(10);
    const saved = h.agent.db.query("SELECT reason, sum(count) AS n FROM events WHERE pod_uid = ? AND reason IN ('FailedSync', 'Exited') GROUP BY reason ORDER BY reason").all(crash.uid);
    const exited = h.events.filter((e) => e.reason === "Exited").length;
    expect(saved).toEqual([
      { reason: "Exited", n: exited },
      { reason: "FailedSync", n: 1 },
    ]);
    const row = h.agent.db.query("SELECT restart_count FROM containers WHERE pod_uid = ?").get(crash.uid) as { restart_count: number };
    expect(row.restart_count).toBe(restartCountOf(h.pod(crash.key)!.app[0]!));
    h.agent.close();
  });
});
