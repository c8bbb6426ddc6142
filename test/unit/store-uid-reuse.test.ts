/**
 * Found by test/e2e/fault.test.ts: a static pod's uid is a hash of node, file and content, so a
 * manifest removed and written back (or changed and changed back) starts a new incarnation under
 * the uid of a deleted one. Its attempts must start over, not mix with the old incarnation's rows.
 */
import { expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

test("a pod that comes back under a deleted pod's uid starts a fresh attempts history", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path, { baseSeconds: 1, capSeconds: 4 });
  h.runtime.behaviours.set("crash", { exitAfterMs: 100, exitCode: 1 });
  const crash = pod({ name: "crash", containers: [container("crash")] });
  await h.kubelet.sync(desired(crash));
  await h.advance(5); // attempts 0..3
  await h.kubelet.sync(desired());
  await h.advance(3);
  expect(h.kubelet.pods.size).toBe(0);
  await h.kubelet.sync(desired(crash)); // the same file again: the same uid
  await h.advance(0.05);
  const rows = h.agent.db.query("SELECT attempt FROM attempts WHERE pod_uid = ? ORDER BY attempt").all(crash.uid);
  const current = h.agent.db.query("SELECT restart_count, state FROM containers WHERE pod_uid = ?").get(crash.uid);
  expect({ current, rows }).toEqual({ current: { restart_count: 0, state: "running" }, rows: [{ attempt: 0 }] });
  h.agent.close();
});
