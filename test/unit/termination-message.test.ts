/**
 * The termination message as the kubelet's convertToKubeContainerStatus makes it: what the
 * container wrote to its termination message file (its last 4 KiB), else, with
 * FallbackToLogsOnError and a failed exit, the last 80 lines of its log (their last 2 KiB); in
 * state.terminated, and in lastState after a restart.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerSpec } from "../../src/manifest/types.ts";
import { createTerminationFile, readTerminationFile } from "../../src/runtime/termination-message.ts";
import type { FakeBehaviour } from "../fake-runtime.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

function setup(dir: string, spec: Partial<ContainerSpec>, behaviour: FakeBehaviour, restartPolicy: "Never" | "Always" = "Never") {
  const h = storeHarness(dir);
  h.runtime.behaviours.set("web", { exitAfterMs: 100, ...behaviour });
  const web = pod({ restartPolicy, containers: [container("web", spec)] });
  const status = () => JSON.parse((h.agent.db.query("SELECT object_json FROM pods").get() as { object_json: string }).object_json).status.containerStatuses[0];
  return { h, web, status };
}

async function terminatedMessage(spec: Partial<ContainerSpec>, behaviour: FakeBehaviour): Promise<string | undefined> {
  using dir = tempDir();
  const t = setup(dir.path, spec, behaviour);
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(1);
  const terminated = t.status().state.terminated;
  t.h.kubelet.stop();
  t.h.agent.close();
  expect(terminated).toBeDefined();
  return terminated.message;
}

test("what the container wrote to its termination message file is state.terminated.message", async () => {
  expect(await terminatedMessage({}, { exitCode: 0, terminationMessage: "DONE" })).toBe("DONE");
  expect(await terminatedMessage({}, { exitCode: 3, terminationMessage: "broke" })).toBe("broke");
});

test("File policy: a failed container with an empty file has no message, whatever its log says", async () => {
  expect(await terminatedMessage({}, { exitCode: 1, output: "DONE" })).toBeUndefined();
});

test("FallbackToLogsOnError: a failed container with an empty file gets the end of its log", async () => {
  expect(await terminatedMessage({ terminationMessagePolicy: "FallbackToLogsOnError" }, { exitCode: 1, output: "DONE" })).toBe("DONE");
});

test("FallbackToLogsOnError: a container that succeeded gets no message from its log", async () => {
  expect(await terminatedMessage({ terminationMessagePolicy: "FallbackToLogsOnError" }, { exitCode: 0, output: "DONE" })).toBeUndefined();
});

test("FallbackToLogsOnError: a file the container wrote wins over the log, also when it failed", async () => {
  const spec = { terminationMessagePolicy: "FallbackToLogsOnError" as const };
  expect(await terminatedMessage(spec, { exitCode: 0, output: "DONE\n", terminationMessage: "OK" })).toBe("OK");
  expect(await terminatedMessage(spec, { exitCode: 2, output: "DONE\n", terminationMessage: "OK" })).toBe("OK");
});

test("FallbackToLogsOnError reads the last 80 lines of the log, and of those the last 2048 bytes", async () => {
  const spec = { terminationMessagePolicy: "FallbackToLogsOnError" as const };
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join("");
  const fromLines = await terminatedMessage(spec, { exitCode: 1, output: lines });
  expect(fromLines).toBe(Array.from({ length: 80 }, (_, i) => `line ${i + 20}\n`).join(""));
  const long = `${"a".repeat(3000)}${"b".repeat(2000)}END\n`;
  const fromBytes = await terminatedMessage(spec, { exitCode: 1, output: long });
  expect(fromBytes).toBe(long.slice(-2048));
});

test("a termination file's message keeps its last 4096 bytes", async () => {
  const written = `${"x".repeat(5000)}${"y".repeat(4090)}DONE!!`;
  expect(await terminatedMessage({}, { exitCode: 0, terminationMessage: written })).toBe(written.slice(-4096));
});

test("after a restart the ended attempt's message is in lastState", async () => {
  using dir = tempDir();
  const t = setup(dir.path, {}, { exitCode: 1, terminationMessage: "first attempt failed" }, "Always");
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(15);
  const status = t.status();
  expect(status.restartCount).toBeGreaterThan(0);
  expect(status.lastState.terminated.message).toBe("first attempt failed");
  t.h.kubelet.stop();
  t.h.agent.close();
});

test("the runtime's termination file: created empty and writable by any user, read from its end, none when missing", () => {
  const dir = mkdtempSync(join(tmpdir(), "termination-"));
  try {
    const path = createTerminationFile(dir, "web", 0);
    expect(readTerminationFile(path)).toBe("");
    expect(statSync(path).mode & 0o777).toBe(0o666);
    expect(createTerminationFile(dir, "web", 0)).not.toBe(path);
    writeFileSync(path, `${"z".repeat(10_000)}DONE`);
    expect(readTerminationFile(path)).toBe(`${"z".repeat(4092)}DONE`);
    expect(readTerminationFile(join(dir, "absent"))).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
