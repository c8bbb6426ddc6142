/**
 * describe of a pod with more events than it shows: the newest 50, oldest of them
 * first, under a line that says how many there are and how to list them all.
 */
import { expect, test } from "bun:test";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

/** As many as describe shows (src/cli/describe/describe.ts DESCRIBED_EVENTS). */
const DESCRIBED_EVENTS = 50;

test("a pod with more events than describe shows: the newest ones, and how many are hidden and how to see them", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const before = h.agent.db.query("SELECT count(*) AS n FROM events").get() as { n: number };
  const base = { type: "Warning" as const, reason: "Unhealthy", podKey: "demo/web-lab", namespace: "demo", pod: "web-lab", podUid: "", container: "web" };
  const uid = (h.agent.db.query("SELECT uid FROM pods WHERE name = 'web-lab'").get() as { uid: string }).uid;
  const extra = 2 * DESCRIBED_EVENTS;
  h.store.saveEvents(Array.from({ length: extra }, (_, i) => ({ ...base, podUid: uid, at: h.clock.now() + i, message: `Liveness probe failed: check ${i}` })));
  let out = "";
  await describeCommand("pod", "web-lab", { db: h.dbPath }, { clock: h.clock, stdout: (text) => void (out += text), stderr: () => {} });
  const events = out.slice(out.indexOf("Events:\n")).split("\n");
  expect(events.slice(0, 4)).toEqual([
    "Events:",
    `  (showing the newest ${DESCRIBED_EVENTS} of ${before.n + extra} events; \`minikubelet events --for pod/web-lab -n demo\` lists all)`,
    "  Type     Reason     Age   From     Message",
    "  ----     ------     ----  ----     -------",
  ]);
  const rows = events.slice(4).filter(Boolean);
  expect(rows.length).toBe(DESCRIBED_EVENTS);
  expect(rows[0]).toEndWith(`Liveness probe failed: check ${extra - DESCRIBED_EVENTS}`);
  expect(rows.at(-1)).toEndWith(`Liveness probe failed: check ${extra - 1}`);
  h.agent.close();
});
