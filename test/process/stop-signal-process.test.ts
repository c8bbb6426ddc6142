/**
 * KEP-4960 with real processes: a container that handles only SIGUSR1 (and ignores SIGTERM) stops
 * within its grace when its stop signal is SIGUSR1, and one that does not handle its stop signal is
 * killed by it, reported as 128 + n like the kubelet reports a signal.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { containerStatus } from "../../src/kubelet/status/pod-status.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { waitForLog } from "../runtime-contract.ts";

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-stopsignal-"));
  runtime = new ProcessRuntime({ rootDir: root });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

const ONLY_USR1 = "trap 'echo stopping; exit 0' USR1; trap '' TERM; echo ready; while true; do sleep 0.2; done";

test("stopSignal SIGUSR1 stops a container that handles only SIGUSR1 within its grace: exit 0 (Completed)", async () => {
  const web = pod({ name: "web", grace: 20, containers: [container("web", { command: ["sh", "-c", ONLY_USR1], stopSignal: "SIGUSR1" })] });
  await h.kubelet.sync(desired(web));
  await h.event((e) => e.reason === "Started");
  const id = h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
  await waitForLog(runtime, id, "ready");
  expect(containerStatus(h.kubelet.pods.get(web.key)!.app[0]!, "process").stopSignal).toBe("SIGUSR1");
  await h.kubelet.sync(desired());
  const exited = await h.event((e) => e.reason === "Exited", 15_000);
  // Exit 0 is the USR1 trap's: SIGTERM would have been ignored until a SIGKILL (137) at 20 s.
  expect(exited.message).toBe("Container web exited with code 0 (Completed)");
  expect(h.events.some((e) => e.reason === "GraceExpired")).toBe(false);
});

test("a stop signal the process does not handle kills it: 128 + 12 for SIGUSR2", async () => {
  const web = pod({ name: "web", grace: 20, containers: [container("web", { command: ["sleep", "60"], stopSignal: "SIGUSR2" })] });
  await h.kubelet.sync(desired(web));
  await h.event((e) => e.reason === "Started");
  await h.kubelet.sync(desired());
  const exited = await h.event((e) => e.reason === "Exited", 15_000);
  expect(exited.message).toBe("Container web exited with code 140 (Error)");
});
