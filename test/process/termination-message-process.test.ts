/**
 * Termination messages on the process runtime: it gives a container no file of its own at its
 * terminationMessagePath (that would change the host), so FallbackToLogsOnError, which needs only
 * the log, is what gives a failed container its message; a non-default path is said once in an
 * event, and nothing of the runtime's writes the host's path.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { containerStatus } from "../../src/kubelet/status/pod-status.ts";
import type { ContainerSpec, PodSpec } from "../../src/manifest/types.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";

let root: string;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-termination-"));
  h = realHarness(new ProcessRuntime({ rootDir: root }));
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

async function terminated(spec: PodSpec) {
  await h.kubelet.sync(desired(spec));
  await h.event((e) => e.reason === "Exited", 10_000, "the container's exit");
  await h.kubelet.idle();
  const state = containerStatus(h.kubelet.pods.get(spec.key)!.app[0]!, "process").state?.terminated;
  if (!state) throw new Error("the container is not terminated");
  return state;
}

function oneShot(script: string, extra: Partial<ContainerSpec>): PodSpec {
  return pod({ name: "term", restartPolicy: "Never", containers: [container("term", { command: ["sh", "-c", script], ...extra })] });
}

test("FallbackToLogsOnError: a failed container's message is the end of its log", async () => {
  const state = await terminated(oneShot("echo -n DONE; false", { terminationMessagePolicy: "FallbackToLogsOnError" }));
  expect(state.exitCode).toBe(1);
  expect(state.message).toBe("DONE");
});

test("FallbackToLogsOnError: a container that succeeds has no message", async () => {
  const state = await terminated(oneShot("echo -n DONE; true", { terminationMessagePolicy: "FallbackToLogsOnError" }));
  expect(state.message).toBeUndefined();
});

test("a non-default terminationMessagePath: one Warning event says what happens instead, and the host's path is never made", async () => {
  const path = join(root, "never-made", "termination-log");
  const spec = oneShot("exit 2", { terminationMessagePath: path, terminationMessagePolicy: "FallbackToLogsOnError" });
  spec.restartPolicy = "Always";
  await h.kubelet.sync(desired(spec));
  await h.count((e) => e.reason === "Started", 2, 10_000);
  const warnings = h.events.filter((e) => e.reason === "TerminationMessagePathNotHonoured");
  expect(warnings.map((e) => [e.type, e.message])).toEqual([
    ["Warning", `terminationMessagePath of container term is not honoured: the process runtime gives the container no file of its own at ${path} (one would change the host's filesystem), so nothing written there is read: a failed container's message is the end of its log`],
  ]);
  expect(existsSync(path)).toBe(false);
});

test("the default path says nothing: every pod of the API server names it", async () => {
  await terminated(oneShot("true", {}));
  expect(h.events.some((e) => e.reason === "TerminationMessagePathNotHonoured")).toBe(false);
});
