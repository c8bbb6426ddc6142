import { describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ContainerSpec } from "../../src/manifest/types.ts";
import type { FakeBehaviour } from "../fake-runtime.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { triageHarness } from "../triage-fixtures.ts";

const check = { type: "exec" as const, command: ["check"] };

/** A pod `app` with one long-running container, started and run for a second. */
async function running(dir: string, behaviour: FakeBehaviour = {}, spec: Partial<ContainerSpec> = {}, probes: Record<string, () => { ok: boolean }> = {}) {
  const h = triageHarness(dir);
  h.runtime.behaviours.set("app", behaviour);
  for (const [key, script] of Object.entries(probes)) h.prober().scripts.set(key, script);
  const app = pod({ name: "app", grace: 2, containers: [container("app", spec)] });
  await h.kubelet.sync(desired(app));
  await h.advance(1);
  return h;
}

const texts = (report: { evidence: { text: string }[] }) => report.evidence.map((e) => e.text);

describe("137 is split four ways from our own records, never guessed", () => {
  test("OOMKilled: the runtime's reason", async () => {
    using dir = tempDir();
    const h = await running(dir.path);
    const app = h.runtime.running("app")!;
    app.reason = "OOMKilled";
    h.runtime.finish(app.id, 137, 9);
    await h.advance(1);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("oom-killed");
    expect(report.verdict.endedBy).toBe("runtime");
    expect(report.nextSteps.at(-1).text).toStartWith("Change: Raise resources.limits.memory");
    h.agent.close();
  });

  test("liveness kill: Unhealthy then Killing before the exit; a process that ignores SIGTERM is killed when the grace runs out", async () => {
    using dir = tempDir();
    const h = await running(dir.path, { ignoreSigterm: true }, { livenessProbe: probe(check, { periodSeconds: 2, failureThreshold: 3 }) });
    h.prober().scripts.set("app/liveness", (call) => ({ ok: call < 1, message: "HTTP probe failed with statuscode: 500" }));
    await h.advance(8);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("liveness-kill");
    expect(report.verdict.endedBy).toBe("probe");
    expect(report.verdict.summary).toBe("The liveness probe killed a running process after 8s: it ignored SIGTERM and was killed when the grace period ran out (exit 137)");
    expect(report.verdict.details[0]).toStartWith("Not a crash: the process was running for 8s when the liveness probe failed (Unhealthy x");
    expect(texts(report)).toContain("event Normal Killing: Container app failed liveness probe, will be restarted");
    expect(texts(report).some((t) => t.startsWith("event Warning GraceExpired: Container app did not stop within its grace period (2s)"))).toBe(true);
    expect(report.container.state).toBe("running");
    expect(report.verdict.details).toContain("It runs again now (restart 1): this verdict is about the attempt before.");
    h.agent.close();
  });

  test("a liveness kill loop: the repeated Killing row brackets the attempt, and GraceExpired inside it proves the kill was that row's", async () => {
    using dir = tempDir();
    const h = await running(dir.path, { ignoreSigterm: true }, { livenessProbe: probe(check, { periodSeconds: 2, failureThreshold: 3 }) }, { "app/liveness": () => ({ ok: false }) });
    await h.advance(52);
    const report = await h.report("app-lab");
    // Attempt 2 (22s to 28s) is lastState; attempt 3 (from 48s) was sent Killing at 52s and is stopping
    // now, so the Killing row's last time is past attempt 2, its first before it.
    expect(report.exit).toMatchObject({ attempt: 2, exitCode: 137, startedAt: "2026-01-01T12:00:22Z", finishedAt: "2026-01-01T12:00:28Z" });
    expect(report.verdict.cause).toBe("liveness-kill");
    expect(report.verdict.details).toContain(
      'Deduced: GraceExpired fell inside this attempt, so the agent was stopping it, and the only Killing row that can have an occurrence inside it is "Container app failed liveness probe, will be restarted" (x4, 2026-01-01T12:00:04Z to 2026-01-01T12:00:52Z).',
    );
    h.agent.close();
  });

  test("grace expiry: the agent stopped it (pod removed) and SIGKILL followed the grace period", async () => {
    using dir = tempDir();
    const h = await running(dir.path, { ignoreSigterm: true });
    await h.kubelet.sync(desired());
    await h.advance(3);
    // The runtime removes a deleted pod's containers and their log files with it.
    for (const file of readdirSync(dir.path)) if (file.endsWith(".log")) rmSync(join(dir.path, file));
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("grace-expired");
    expect(texts(report)).toContain("log of attempt 0: removed with the deleted pod's containers");
    expect(report.verdict.endedBy).toBe("agent");
    expect(report.exit.exitCode).toBe(137);
    expect(texts(report)).toContain("event Normal Killing: Stopping container app");
    expect(report.verdict.details.at(-1)).toBe("The pod was deleted at 2026-01-01T12:00:03Z; this is its last record, and nothing will restart it.");
    expect(report.nextSteps.some((s: { command?: string }) => s.command?.includes(" logs "))).toBe(false);
    expect(report.backoff).toBeUndefined();
    h.agent.close();
  });

  test("an outside SIGKILL: 137 with no OOMKilled, no probe kill and no stop of ours", async () => {
    using dir = tempDir();
    const h = await running(dir.path, {}, { livenessProbe: probe(check, { periodSeconds: 2 }) });
    h.runtime.finish(h.runtime.running("app")!.id, 137, 9);
    await h.advance(1);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("outside-sigkill");
    expect(report.verdict.endedBy).toBe("outside");
    expect(report.verdict.details[0]).toBe("Nothing of ours stopped it: no Killing and no GraceExpired event between its start and its exit.");
    h.agent.close();
  });

  test("a container the runtime lost: 137 with reason ContainerStatusUnknown", async () => {
    using dir = tempDir();
    const h = await running(dir.path);
    const id = h.runtime.running("app")!.id;
    h.runtime.containers.delete(id);
    h.runtime.emit({ type: "exited", containerId: id });
    await h.advance(1);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("container-lost");
    h.agent.close();
  });
});

describe("143 is SIGTERM: stopped by us, a liveness kill the process honoured, or someone else", () => {
  test("a liveness kill that the process honoured", async () => {
    using dir = tempDir();
    const h = await running(dir.path, {}, { livenessProbe: probe(check, { periodSeconds: 2, failureThreshold: 3 }) });
    h.prober().scripts.set("app/liveness", (call) => ({ ok: call < 1 }));
    await h.advance(6);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("liveness-kill");
    expect(report.verdict.summary).toBe("The liveness probe killed a running process after 6s: it honoured SIGTERM (exit 143)");
    h.agent.close();
  });

  test("a startup probe kill", async () => {
    using dir = tempDir();
    const h = await running(dir.path, {}, { startupProbe: probe(check, { periodSeconds: 1, failureThreshold: 3 }) }, { "app/startup": () => ({ ok: false }) });
    await h.advance(2);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("startup-kill");
    expect(report.nextSteps.at(-1).text).toContain("startupProbe.failureThreshold x periodSeconds");
    h.agent.close();
  });

  test("stopped by the agent: the pod was removed and the process exited on SIGTERM", async () => {
    using dir = tempDir();
    const h = await running(dir.path);
    await h.kubelet.sync(desired());
    await h.advance(1);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("stopped");
    expect(report.verdict.summary).toBe("Stopped by the agent (Stopping container app), exit 143: not a crash");
    h.agent.close();
  });

  test("SIGTERM from someone else", async () => {
    using dir = tempDir();
    const h = await running(dir.path);
    h.runtime.finish(h.runtime.running("app")!.id, 143, 15);
    await h.advance(1);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("outside-sigterm");
    h.agent.close();
  });
});

describe("a postStart failure is the hook's, not the program's", () => {
  test("FailedPostStartHook, then Killing FailedPostStartHook before the exit", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.exec = () => ({ exitCode: 3, output: "not warm" });
    const app = pod({ name: "app", grace: 2, containers: [container("app", { postStart: { type: "exec", command: ["warm-up"] } })] });
    await h.kubelet.sync(desired(app));
    await h.advance(1);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("poststart-failed");
    expect(report.verdict.endedBy).toBe("agent");
    expect(report.verdict.summary).toStartWith("Killed because its postStart hook failed (FailedPostStartHook), exit 143");
    expect(texts(report).some((t) => t.startsWith("event Warning FailedPostStartHook") && t.endsWith(": PostStartHook failed"))).toBe(true);
    expect(texts(report).some((t) => t.startsWith("event Normal Killing") && t.endsWith(": FailedPostStartHook"))).toBe(true);
    h.agent.close();
  });
});
