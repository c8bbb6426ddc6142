/**
 * A liveness kill, a grace-period expiry and an OOM kill are three different causes (issue 14),
 * though the kubelet reports the first two alike (reason Error): the reason Kubernetes sees stays
 * the kubelet's, and the cause is in the attempts table, the Exited event and describe's Attempts.
 */
import { expect, test } from "bun:test";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import type { ContainerSpec } from "../../src/manifest/types.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const exec = { type: "exec" as const, command: ["check"] };

function setup(dir: string, spec: Partial<ContainerSpec>, grace = 30) {
  let scripted!: ScriptedProber;
  const h = storeHarness(dir, { probeRunner: (runtime, clock) => (scripted = new ScriptedProber(runtime, clock)) });
  const web = pod({ grace, containers: [container("web", spec)] });
  const attempt = (n: number) =>
    h.agent.db.query("SELECT exit_code, reason, kill_cause, grace_expired FROM attempts WHERE container = 'web' AND attempt = ?").get(n);
  const exited = () => h.events.filter((e) => e.reason === "Exited").map((e) => e.message);
  const lastState = () => JSON.parse((h.agent.db.query("SELECT object_json FROM pods").get() as { object_json: string }).object_json).status.containerStatuses[0].lastState;
  const describeAttempts = async () => {
    let out = "";
    await describeCommand("pod", web.fullName, { db: h.dbPath }, { clock: h.clock, stdout: (t) => (out += t), utcOffsetMinutes: 0 });
    return out.slice(out.indexOf("Attempts:"), out.indexOf("Events:"));
  };
  return { h, web, prober: () => scripted, attempt, exited, lastState, describeAttempts };
}

test("a liveness kill: reason Error as the kubelet sets it, kill_cause liveness, the Exited event names the probe", async () => {
  using dir = tempDir();
  const t = setup(dir.path, { livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1 }) });
  t.prober().scripts.set("web/liveness", (call) => ({ ok: call < 1 }));
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(2.5);
  expect(t.attempt(0)).toEqual({ exit_code: 143, reason: "Error", kill_cause: "liveness", grace_expired: 0 });
  expect(t.exited()[0]).toBe("Container web exited with code 143 (Error) after failing its liveness probe");
  expect(t.lastState()).toEqual({ terminated: expect.objectContaining({ exitCode: 143, reason: "Error" }) });
  expect(Object.keys(t.lastState().terminated).sort()).toEqual(["containerID", "exitCode", "finishedAt", "reason", "signal", "startedAt"]);
  expect(await t.describeAttempts()).toMatch(/\n  web\s+0\s+.*\s143 \(signal 15\)\s+Error\s+liveness probe\s+web-0-/);
  t.h.kubelet.stop();
  t.h.agent.close();
});

test("a liveness kill of a container that ignores SIGTERM: the grace expiry is recorded beside the probe", async () => {
  using dir = tempDir();
  const t = setup(dir.path, { livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1 }) }, 3);
  t.h.runtime.behaviours.set("web", { ignoreSigterm: true });
  t.prober().scripts.set("web/liveness", (call) => ({ ok: call < 1 }));
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(5);
  expect(t.attempt(0)).toEqual({ exit_code: 137, reason: "Error", kill_cause: "liveness", grace_expired: 1 });
  expect(t.exited()[0]).toBe("Container web exited with code 137 (Error) after failing its liveness probe: killed with SIGKILL when its grace period ran out");
  expect(await t.describeAttempts()).toMatch(/\n  web\s+0\s+.*\s137 \(signal 9\)\s+Error\s+liveness probe, grace expired\s+web-0-/);
  t.h.kubelet.stop();
  t.h.agent.close();
});

test("a grace expiry when the pod is removed: reason Error, kill_cause removed with grace_expired", async () => {
  using dir = tempDir();
  const t = setup(dir.path, {}, 2);
  t.h.runtime.behaviours.set("web", { ignoreSigterm: true });
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(1);
  await t.h.kubelet.sync(desired());
  await t.h.advance(3);
  expect(t.h.lines((e) => e.reason === "GraceExpired")).toEqual(["3.0s GraceExpired web"]);
  expect(t.attempt(0)).toEqual({ exit_code: 137, reason: "Error", kill_cause: "removed", grace_expired: 1 });
  expect(t.exited()).toEqual(["Container web exited with code 137 (Error): killed with SIGKILL when its grace period ran out"]);
  expect(await t.describeAttempts()).toMatch(/\n  web\s+0\s+.*\s137 \(signal 9\)\s+Error\s+pod removed, grace expired\s+web-0-/);
  t.h.kubelet.stop();
  t.h.agent.close();
});

test("an OOM kill: reason OOMKilled, kill_cause oom", async () => {
  using dir = tempDir();
  const t = setup(dir.path, {});
  t.h.runtime.behaviours.set("web", { exitAfterMs: 1000, exitCode: 137, exitReason: "OOMKilled" });
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(1.5);
  expect(t.attempt(0)).toEqual({ exit_code: 137, reason: "OOMKilled", kill_cause: "oom", grace_expired: 0 });
  expect(t.exited()[0]).toBe("Container web exited with code 137 (OOMKilled)");
  expect(t.lastState()).toEqual({ terminated: expect.objectContaining({ exitCode: 137, reason: "OOMKilled" }) });
  expect(await t.describeAttempts()).toMatch(/\n  web\s+0\s+.*\s137\s+OOMKilled\s+OOM\s+web-0-/);
  t.h.kubelet.stop();
  t.h.agent.close();
});

test("an OOM kill while a liveness stop waits out its grace is the kernel's: kill_cause oom", async () => {
  using dir = tempDir();
  const t = setup(dir.path, { livenessProbe: probe(exec, { periodSeconds: 1, failureThreshold: 1 }) });
  t.h.runtime.behaviours.set("web", { ignoreSigterm: true });
  t.prober().scripts.set("web/liveness", (call) => ({ ok: call < 1 }));
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(1.5);
  expect(t.h.lines((e) => e.reason === "Killing")).toEqual(["1.0s Killing web"]);
  t.h.runtime.finish(t.h.pod(t.web.key)!.app[0]!.containerId!, 137, 9, "OOMKilled");
  await t.h.advance(0.5);
  expect(t.attempt(0)).toEqual({ exit_code: 137, reason: "OOMKilled", kill_cause: "oom", grace_expired: 0 });
  expect(t.exited()[0]).toBe("Container web exited with code 137 (OOMKilled)");
  t.h.kubelet.stop();
  t.h.agent.close();
});

test("a crash on its own has no kill cause", async () => {
  using dir = tempDir();
  const t = setup(dir.path, {});
  t.h.runtime.behaviours.set("web", { exitAfterMs: 1000, exitCode: 1 });
  await t.h.kubelet.sync(desired(t.web));
  await t.h.advance(1.5);
  expect(t.attempt(0)).toEqual({ exit_code: 1, reason: "Error", kill_cause: null, grace_expired: 0 });
  expect(t.exited()[0]).toBe("Container web exited with code 1 (Error)");
  expect(await t.describeAttempts()).toMatch(/\n  web\s+0\s+.*\s1\s+Error\s+-\s+web-0-/);
  t.h.kubelet.stop();
  t.h.agent.close();
});
