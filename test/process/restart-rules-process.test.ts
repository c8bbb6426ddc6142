/**
 * Container restart rules (KEP-5307) with real processes: under pod Never, a container whose rule
 * is In [42] and that exits 42 is started again; its neighbour with the same rule that exits 1 is not.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerRestartRule } from "../../src/manifest/types.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-rules-"));
  h = realHarness(new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) }));
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

const rules: ContainerRestartRule[] = [{ action: "Restart", exitCodes: { operator: "In", values: [42] } }];

test("pod Never, rule In [42]: exit 42 restarts, exit 1 stays down", async () => {
  const marker = join(root, "ran-once");
  const job = pod({
    name: "job",
    restartPolicy: "Never",
    containers: [
      // Exits 42 on its first run, then keeps running.
      container("retry", { command: ["sh", "-c", `if [ -e ${marker} ]; then exec sleep 60; fi; touch ${marker}; exit 42`], restartPolicy: "Never", restartPolicyRules: rules }),
      container("fail", { command: ["sh", "-c", "exit 1"], restartPolicy: "Never", restartPolicyRules: rules }),
    ],
  });
  await h.kubelet.sync(desired(job));
  await h.event((e) => e.reason === "Exited" && e.container === "fail");
  await h.count((e) => e.reason === "Started" && e.container === "retry", 2, 10_000);
  await h.kubelet.idle();
  const record = h.kubelet.pods.get(job.key)!;
  const [retry, fail] = record.app;
  expect(retry!.state).toBe("running");
  expect(restartCountOf(retry!)).toBe(1);
  expect(retry!.lastTermination?.exitCode).toBe(42);
  expect(fail!.state).toBe("terminated");
  expect(fail!.terminated?.exitCode).toBe(1);
  expect(h.events.filter((e) => e.reason === "Started" && e.container === "fail")).toHaveLength(1);
  expect(record.phase).toBe("Running");
});
