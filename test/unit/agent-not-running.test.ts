/**
 * Issue 11: with no agent holding the database, `get pods` and `describe` showed the last
 * checkpoint's "Running" rows as if live. They now say so on stderr, one line with the age of the
 * last update in kubectl's format; stdout stays the table (scripts parse it).
 */
import { expect, test } from "bun:test";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { getCommand } from "../../src/cli/get/get.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

async function run(h: ReturnType<typeof storeHarness>) {
  const get = { out: "", err: "" };
  await getCommand("pods", undefined, { db: h.dbPath, namespace: "demo" }, { clock: h.clock, stdout: (t) => (get.out += t), stderr: (t) => (get.err += t) });
  const describe = { out: "", err: "" };
  await describeCommand("pod", "web-lab", { db: h.dbPath }, { clock: h.clock, stdout: (t) => (describe.out += t), stderr: (t) => (describe.err += t), utcOffsetMinutes: 0 });
  return { get, describe };
}

test("get and describe say the agent is not running, and since when nothing was updated", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(5);

  const live = await run(h);
  expect(live.get.err).toBe("");
  expect(live.describe.err).toBe("");
  expect(live.get.out).toMatch(/^NAME +READY +STATUS +RESTARTS +AGE\nweb-lab +1\/1 +Running +0 +5s\n$/);

  const { at } = h.agent.db.query("SELECT max(updated_at) AS at FROM pods").get() as { at: number };
  h.agent.close();
  await h.advance(263 - (h.clock.now() - at) / 1000);
  const stale = await run(h);
  expect(stale.get.err).toBe("agent not running, last update 4m23s ago\n");
  expect(stale.describe.err).toBe("agent not running, last update 4m23s ago\n");
  expect(stale.get.out).toMatch(/^NAME +READY +STATUS +RESTARTS +AGE\nweb-lab +1\/1 +Running +0 +4m2\ds\n$/);
  expect(stale.describe.out).toStartWith("Name:");
});
