/**
 * Issue 11: after the agent stopped its pods on exit (--stop-pods-on-exit), `describe` printed
 * "Status: Terminating (lasts 3m55s)" for a pod whose stop ended minutes ago, the time still
 * counting, and `logs` blamed a missing file on retention. A deleted pod says how it ended, when it
 * was deleted and why, and that its logs went with its containers.
 */
import { expect, test } from "bun:test";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

test("a pod stopped by the agent's exit minutes ago is described as deleted, not Terminating", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  const web = pod({ name: "web", grace: 5, containers: [container("web")] });
  await h.kubelet.sync(desired(web));
  await h.advance(10);
  const stopped = h.kubelet.shutdown();
  await h.advance(1);
  await stopped;
  await h.advance(235);
  let out = "";
  await describeCommand("pod", "web-lab", { db: h.dbPath }, { clock: h.clock, stdout: (t) => (out += t), utcOffsetMinutes: 0 });
  expect(out).not.toContain("Terminating");
  expect(out).toMatch(/\nStatus: +\w+\n/);
  expect(out).toMatch(/\nDeleted: +Thu, 01 Jan 2026 12:00:1\d \+0000 \(3m5\ds ago, stopped when the agent exited with --stop-pods-on-exit\)\n/);
  h.agent.close();
});

test("logs of a pod stopped by the agent's exit says its logs went with it, not an engine or ENOENT error", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", grace: 5, containers: [container("web")] })));
  await h.advance(10);
  const stopped = h.kubelet.shutdown();
  await h.advance(1);
  await stopped;
  await h.advance(239);
  const readLogs = () => Promise.reject(new Error("docker container 0123456789ab: No such container"));
  await expect(logsCommand("web-lab", { db: h.dbPath }, { clock: h.clock, stdout: () => {}, stderr: () => {}, readLogs })).rejects.toThrow(
    `logs of container "web" attempt 0: pod web-lab was deleted 4m ago (stopped when the agent exited with --stop-pods-on-exit), and its containers' logs with it`,
  );
  h.agent.close();
});
