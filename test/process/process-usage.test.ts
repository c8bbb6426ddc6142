/**
 * containerUsage of the process runtime on this host's cgroups: a busy loop's CPU time grows in
 * its cgroup (cpuacct on v1, joined whatever its limits), its memory is read, its log is counted;
 * an exited container has no usage.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { contractContainer, contractPod, waitForStatus } from "../runtime-contract.ts";
import { hostCgroupsMissing, removeIdentityCgroups } from "../host-cgroups.ts";
import { describeNeeding } from "../requirements.ts";
import { waitFor } from "../e2e/helpers.ts";

const owner = `test-${randomBytes(4).toString("hex")}`;
const rootDir = mkdtempSync(join(tmpdir(), "mk-usage-"));
afterAll(async () => {
  rmSync(rootDir, { recursive: true, force: true });
  await removeIdentityCgroups(owner);
});

describeNeeding("process container usage on this host", hostCgroupsMissing(), () => {
  test("a busy loop's CPU time and memory from its cgroup, its log's bytes; nothing once it exited", async () => {
    const runtime = new ProcessRuntime({ rootDir, owner });
    try {
      const busy = contractContainer("busy", ["sh", "-c", "echo started; while :; do :; done"]);
      const pod = contractPod("usage", [busy]);
      const sandbox = await runtime.runPodSandbox(pod);
      const id = await runtime.startContainer({ pod, container: busy, kind: "app", attempt: 0, sandbox });
      const first = await waitFor("a first reading with CPU time", async () => {
        const usage = await runtime.containerUsage(id);
        return usage?.cpuUsageCoreNanoSeconds !== undefined && usage.logsUsedBytes! > 0 ? usage : undefined;
      }, 10_000);
      expect(first.memory!.usageBytes).toBeGreaterThan(0);
      expect(first.memory!.workingSetBytes).toBeLessThanOrEqual(first.memory!.usageBytes);
      expect(first.memory!.limitBytes).toBeUndefined();
      // The log's bytes on disk: one CRI record, its time, stream and tag before the line.
      expect(first.logsUsedBytes).toBe("2026-12-02T14:05:01.123456789Z stdout F started\n".length);
      await waitFor("more CPU time", async () => ((await runtime.containerUsage(id))?.cpuUsageCoreNanoSeconds ?? 0) > first.cpuUsageCoreNanoSeconds! + 100_000_000, 10_000);
      await runtime.killContainer(id, "SIGKILL");
      await waitForStatus(runtime, id, (status) => status.state === "exited", 10_000);
      expect(await runtime.containerUsage(id)).toBeUndefined();
      await runtime.removePodSandbox(sandbox.id);
    } finally {
      await runtime.close();
    }
  }, 30_000);
});
