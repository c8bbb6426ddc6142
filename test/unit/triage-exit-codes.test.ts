import { describe, expect, test } from "bun:test";
import type { FakeBehaviour } from "../fake-runtime.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { triageHarness } from "../triage-fixtures.ts";
import type { RestartPolicy } from "../../src/manifest/types.ts";

/** A one-container pod `app` whose every attempt ends as `behaviour` says, run for `seconds`. */
async function crashing(dir: string, behaviour: FakeBehaviour, options: { restartPolicy?: RestartPolicy; seconds?: number } = {}) {
  const h = triageHarness(dir);
  h.runtime.behaviours.set("app", behaviour);
  await h.kubelet.sync(desired(pod({ name: "app", restartPolicy: options.restartPolicy, containers: [container("app")] })));
  await h.advance(options.seconds ?? 30);
  return h;
}

describe("triage maps the exit code of the attempt in lastState to a cause", () => {
  test("1: an application error, a crash and not a probe; the previous attempt's last lines are quoted", async () => {
    using dir = tempDir();
    const h = await crashing(dir.path, { exitAfterMs: 1000, exitCode: 1 });
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("app-error");
    expect(report.verdict.endedBy).toBe("itself");
    expect(report.verdict.details[0]).toStartWith("A crash, not a probe: no Killing event");
    expect(report.exit).toEqual({ attempt: 2, exitCode: 1, reason: "Error", startedAt: "2026-01-01T12:00:12Z", finishedAt: "2026-01-01T12:00:13Z" });
    // The exit is the state shown while its back-off runs; its output is the current attempt's log.
    expect(report.evidence[0]).toEqual({ at: "2026-01-01T12:00:13Z", source: "state", text: "state.terminated (attempt 2): exit code 1 (Error), ran 1s" });
    expect(report.evidence.map((e: { text: string }) => e.text)).toContain("log of attempt 2 | app attempt 2");
    expect(report.nextSteps[0].command).toBe(`minikubelet logs app-lab -n demo -c app --db ${h.dbPath}`);
    h.agent.close();
  });

  test("0 under restartPolicy Always: a job-like program restarted; under OnFailure it is done and nothing restarts", async () => {
    using dir = tempDir();
    const always = await crashing(dir.path, { exitAfterMs: 1000, exitCode: 0 });
    const report = await always.report("app-lab");
    expect(report.verdict.cause).toBe("completed-restarted");
    expect(report.pod.status).toBe("Completed");
    expect(report.nextSteps.at(-1).text).toContain("run it as a Job / under restartPolicy OnFailure or Never");
    expect(report.backoff).toBeDefined();
    always.agent.close();

    using other = tempDir();
    const onFailure = await crashing(other.path, { exitAfterMs: 1000, exitCode: 0 }, { restartPolicy: "OnFailure" });
    const done = await onFailure.report("app-lab");
    expect(done.verdict.cause).toBe("completed");
    expect(done.evidence[0].source).toBe("state");
    expect(done.backoff).toBeUndefined();
    expect(done.nextSteps[0].command).toBe(`minikubelet logs app-lab -n demo -c app --db ${onFailure.dbPath}`);
    onFailure.agent.close();
  });

  test.each([
    [126, "not-executable", "could not be executed (exit 126)"],
    [127, "command-not-found", "Command not found (exit 127)"],
    [139, "segfault", "Segmentation fault (exit 139, SIGSEGV)"],
    [134, "signal", "Killed by signal 6 (SIGABRT) (exit 134 = 128 + 6)"],
    [3, "app-exit-code", "The program exited with its own code 3"],
  ])("%d: %s", async (exitCode, cause, words) => {
    using dir = tempDir();
    const h = await crashing(dir.path, { exitAfterMs: 500, exitCode });
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe(cause);
    expect(report.verdict.summary).toContain(words);
    expect(report.exit.exitCode).toBe(exitCode);
    h.agent.close();
  });

  test("128 and start errors: the runtime could not start it; its message is the evidence, and there is no log to read", async () => {
    using dir = tempDir();
    const h = await crashing(dir.path, { startError: 'exec: "serve": executable file not found in $PATH' });
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("start-error");
    expect(report.verdict.endedBy).toBe("never-started");
    expect(report.verdict.summary).toBe('The runtime could not start it (StartError, exit 128): exec: "serve": executable file not found in $PATH');
    expect(report.evidence.map((e: { text: string }) => e.text)).toContain("attempt 3: could not start 128 (StartError)");
    expect(report.nextSteps.some((s: { command?: string }) => s.command?.includes(" logs "))).toBe(false);
    h.agent.close();
  });
});
