/**
 * The kill causes of issue 14 with real processes: a liveness kill that SIGTERM ends, and one whose
 * process ignores SIGTERM and is SIGKILLed at the grace. The kubelet's reason (Error) stays; the
 * Exited event says what ended it.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { ProbeManager } from "../../src/prober/probe-manager.ts";
import { Prober } from "../../src/prober/prober.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-kill-"));
  runtime = new ProcessRuntime({ rootDir: root });
  const probes = new ProbeManager({ runner: new Prober({ clock: realClock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) }), clock: realClock });
  h = realHarness(runtime, { probes });
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

const failingLiveness = probe({ type: "exec", command: ["false"] }, { periodSeconds: 1, failureThreshold: 1 });

test("a liveness kill: 143 (Error), the Exited event names the probe", async () => {
  const web = pod({ name: "web", grace: 5, containers: [container("web", { command: ["sleep", "60"], livenessProbe: failingLiveness })] });
  await h.kubelet.sync(desired(web));
  const exited = await h.event((e) => e.reason === "Exited");
  expect(exited.message).toBe("Container web exited with code 143 (Error) after failing its liveness probe");
});

test("a liveness kill the process ignores: SIGKILL at the grace, 137 (Error), both causes in the Exited event", async () => {
  const script = "trap '' TERM; while true; do sleep 0.1; done";
  // The first probe waits a second: SIGTERM must find the trap in place.
  const livenessProbe = { ...failingLiveness, initialDelaySeconds: 1 };
  const web = pod({ name: "web", grace: 1, containers: [container("web", { command: ["sh", "-c", script], livenessProbe })] });
  await h.kubelet.sync(desired(web));
  const exited = await h.event((e) => e.reason === "Exited", 10_000);
  expect(exited.message).toBe("Container web exited with code 137 (Error) after failing its liveness probe: killed with SIGKILL when its grace period ran out");
  expect(h.events.some((e) => e.reason === "GraceExpired")).toBe(true);
});
