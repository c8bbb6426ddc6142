import { describe, expect, test } from "bun:test";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { triageHarness } from "../triage-fixtures.ts";
import { recordBackoffSettings } from "../../src/store/agent-settings.ts";

const check = { type: "exec" as const, command: ["check"] };
const texts = (report: { evidence: { text: string }[] }) => report.evidence.map((e) => e.text);

describe("triage tells the pod's shapes of trouble apart", () => {
  test("an init container that blocks the pod: it is the one chosen, with its attempts; the app container waits for it", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.behaviours.set("migrate", { exitAfterMs: 500, exitCode: 2 });
    await h.kubelet.sync(desired(pod({ name: "web", init: [container("migrate")], containers: [container("web")] })));
    await h.advance(40);
    const { out, err } = await h.triage("web-lab", { output: "json" });
    const report = JSON.parse(out);
    expect(err).toBe('Defaulted container "migrate" out of: migrate, web (in trouble: migrate)\n');
    expect(report.container).toMatchObject({ name: "migrate", kind: "init", role: "init-blocking", restartCount: 3 });
    expect(report.pod.status).toBe("Init:Error");
    expect(report.verdict.summary).toBe("Init container migrate blocks the pod (Init:Error): the app containers wait until it exits 0. The program exited with its own code 2 after 500ms, on its own");
    expect(texts(report)).toContain("attempts: 4 starts since 2026-01-01T12:00:00Z; 4 x exit 2 (Error)");

    const app = await h.report("web-lab", { container: "web" });
    expect(app.verdict.cause).toBe("waiting-for-init");
    expect(app.nextSteps[0].command).toBe(`minikubelet triage web-lab -n demo -c migrate --db ${h.dbPath}`);
    h.agent.close();
  });

  test("a crashing sidecar (a restartable init container): named as such, while the app container runs", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.behaviours.set("proxy", (attempt) => (attempt === 0 ? {} : { exitAfterMs: 1000, exitCode: 1 }));
    await h.kubelet.sync(desired(pod({ name: "web", init: [container("proxy", { restartPolicy: "Always" })], containers: [container("web")] })));
    await h.advance(1);
    h.runtime.finish(h.runtime.running("proxy")!.id, 1);
    await h.advance(20);
    const { out, err } = await h.triage("web-lab", { output: "json" });
    const report = JSON.parse(out);
    expect(err).toBe('Defaulted container "proxy" out of: proxy, web (in trouble: proxy)\n');
    expect(report.container).toMatchObject({ name: "proxy", kind: "sidecar", role: "sidecar" });
    expect(report.verdict.summary).toStartWith("Sidecar proxy (a restartable init container) keeps restarting: Application error");
    expect(report.backoff).toBeDefined();
    h.agent.close();
  });

  test("a sidecar that cannot start holds back the containers after it", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.behaviours.set("proxy", { startError: "no such file: /envoy.yaml" });
    await h.kubelet.sync(desired(pod({ name: "web", init: [container("proxy", { restartPolicy: "Always" })], containers: [container("web")] })));
    await h.advance(5);
    const report = await h.report("web-lab");
    expect(report.container.role).toBe("sidecar");
    expect(report.verdict.summary).toBe("Sidecar proxy (a restartable init container) keeps restarting; the containers after it wait until it runs: The runtime could not start it (StartError, exit 128): no such file: /envoy.yaml");
    h.agent.close();
  });

  test("a container that has not started because the sandbox cannot be made: the pod's own Warning events are the evidence", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.runPodSandbox = async () => {
      throw new Error("network namespace: permission denied");
    };
    await h.kubelet.sync(desired(pod({ name: "app", containers: [container("app")] })));
    await h.advance(2);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("not-started");
    expect(texts(report)).toContain("event Warning FailedCreatePodSandBox: Failed to create pod sandbox: network namespace: permission denied");
    h.agent.close();
  });

  test("an image that cannot be pulled: ErrImagePull, then ImagePullBackOff, with the Failed events", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.missingImages.add("registry.example/app:v9");
    await h.kubelet.sync(desired(pod({ name: "app", containers: [container("app", { image: "registry.example/app:v9" })] })));
    await h.advance(2);
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("image-pull");
    expect(report.verdict.summary).toStartWith("The image registry.example/app:v9 cannot be pulled (ImagePullBackOff)");
    expect(texts(report)).toContain("event Warning Failed: Failed to pull image \"registry.example/app:v9\": manifest for registry.example/app:v9 not found");
    expect(report.nextSteps.some((s: { command?: string }) => s.command?.includes(" logs "))).toBe(false);
    h.agent.close();
  });

  test("a readiness probe that fails: not ready, never restarted; a healthy container has no trouble", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.prober().scripts.set("web/readiness", () => ({ ok: false }));
    await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web", { readinessProbe: probe(check, { periodSeconds: 1 }) }), container("sidecar")] })));
    await h.advance(5);
    const { out, err } = await h.triage("web-lab", { output: "json" });
    expect(err).toBe('Defaulted container "web" out of: web, sidecar (in trouble: web)\n');
    expect(JSON.parse(out).verdict.cause).toBe("readiness-failing");
    const healthy = await h.report("web-lab", { container: "sidecar" });
    expect(healthy.verdict).toEqual({ cause: "healthy", summary: "No trouble found: sidecar is running, with no restarts", details: [] });
    h.agent.close();
  });
});

describe("back-off: when the next start is allowed, and when the curve resets", () => {
  test("waiting: the next start is the finish plus the recorded wait; running again: a crash before 2 x cap after the restart still waits", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path, { baseSeconds: 10, capSeconds: 60 });
    h.runtime.behaviours.set("app", (attempt) => (attempt < 3 ? { exitAfterMs: 1000, exitCode: 1 } : {}));
    await h.kubelet.sync(desired(pod({ name: "app", containers: [container("app")] })));
    await h.advance(20);
    const waiting = await h.report("app-lab", { backoffMax: 60 });
    // attempt 2 started at 12 and crashed at 13: the wait is 20s, so the next start is at 33.
    expect(waiting.backoff).toMatchObject({ waitMs: 20_000, nextStartAt: "2026-01-01T12:00:33Z", nextWaitMs: 40_000, resetAfterMs: 120_000, resetAt: "2026-01-01T12:02:12Z" });
    expect(waiting.backoff.lines[0]).toBe("Next start allowed at 2026-01-01T12:00:33Z (in 13s): the back-off waits 20s from the finish at 2026-01-01T12:00:13Z.");
    expect(waiting.backoff.lines[2]).toStartWith("The back-off resets after 2m0s of clean running (2 x cap 1m0s):");

    await h.advance(20);
    const running = await h.report("app-lab", { backoffMax: 60 });
    expect(running.container.state).toBe("running");
    expect(running.backoff.lines).toEqual([
      "Running again since its last restart 7s ago.",
      "The back-off resets after 2m0s of clean running (2 x cap 1m0s): a crash before 2026-01-01T12:02:33Z waits 40s; after it, the restart is immediate.",
    ]);
    h.agent.close();
  });

  test("without --backoff-max the cap is the one the agent recorded at its start", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path, { baseSeconds: 1, capSeconds: 8 });
    recordBackoffSettings(h.agent.db, { baseMs: 1000, capMs: 8000 }, h.clock.now());
    h.runtime.behaviours.set("app", { exitAfterMs: 1000, exitCode: 1 });
    await h.kubelet.sync(desired(pod({ name: "app", containers: [container("app")] })));
    await h.advance(5);
    const report = await h.report("app-lab");
    expect(report.backoff.resetAfterMs).toBe(16_000);
    expect(report.backoff.lines.at(-1)).toContain("(2 x cap 8s, as the agent ran)");
    // A flag still wins over the record, for an agent that ran with other settings before.
    expect((await h.report("app-lab", { backoffMax: 60 })).backoff.resetAfterMs).toBe(120_000);
    h.agent.close();
  });

  test("with neither a flag nor an agent's record, the cap is the kubelet's default, and the report says so", async () => {
    using dir = tempDir();
    const h = triageHarness(dir.path);
    h.runtime.behaviours.set("app", { exitAfterMs: 1000, exitCode: 1 });
    await h.kubelet.sync(desired(pod({ name: "app", containers: [container("app")] })));
    await h.advance(5);
    const report = await h.report("app-lab");
    expect(report.backoff.lines.at(-1)).toContain("2 x cap 5m0s, the kubelet's default: no agent recorded its own; pass --backoff-max if it ran with another");
    h.agent.close();
  });
});

test("an init container that keeps running holds the pod in Init: it is the one chosen, and its log is the next step", async () => {
  using dir = tempDir();
  const h = triageHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", init: [container("wait-for-db")], containers: [container("web")] })));
  await h.advance(90);
  const { out, err } = await h.triage("web-lab", { output: "json" });
  const report = JSON.parse(out);
  expect(err).toBe('Defaulted container "wait-for-db" out of: wait-for-db, web (in trouble: wait-for-db)\n');
  expect(report.verdict.cause).toBe("init-running");
  expect(report.verdict.summary).toBe("Init container wait-for-db is still running (since 2026-01-01T12:00:00Z, 1m30s): the pod waits until it exits 0 (Init:0/1)");
  expect(report.nextSteps[0].command).toBe(`minikubelet logs web-lab -n demo -c wait-for-db --db ${h.dbPath}`);
  h.agent.close();
});
