/**
 * Triage on containers with their own restart policy and rules (KEP-5307): the verdict names the
 * rule or policy that decided, the back-off outlook appears only when the container will restart,
 * and a finished program restarted by a rule is said to be restarted by it.
 */
import { describe, expect, test } from "bun:test";
import type { FakeBehaviour } from "../fake-runtime.ts";
import type { ContainerRestartRule, ContainerSpec, RestartPolicy } from "../../src/manifest/types.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { triageHarness } from "../triage-fixtures.ts";

const inCodes = (...values: number[]): ContainerRestartRule => ({ action: "Restart", exitCodes: { operator: "In", values } });

async function run(dir: string, behaviour: FakeBehaviour, spec: Partial<ContainerSpec>, options: { restartPolicy?: RestartPolicy; seconds?: number; init?: boolean } = {}) {
  const h = triageHarness(dir);
  h.runtime.behaviours.set("app", behaviour);
  const main = container("app", spec);
  const p = options.init
    ? pod({ name: "app", restartPolicy: options.restartPolicy, init: [main], containers: [container("web")] })
    : pod({ name: "app", restartPolicy: options.restartPolicy, containers: [main] });
  await h.kubelet.sync(desired(p));
  await h.advance(options.seconds ?? 30);
  return h;
}

describe("triage explains restart rules", () => {
  test("under pod Never, exit 42 matching In [42]: it restarts because of restartPolicyRules[0], with its back-off outlook", async () => {
    using dir = tempDir();
    const h = await run(dir.path, { exitAfterMs: 1000, exitCode: 42 }, { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] }, { restartPolicy: "Never" });
    const report = await h.report("app-lab");
    expect(report.pod.phase).toBe("Running");
    expect(report.verdict.cause).toBe("app-exit-code");
    expect(report.verdict.details).toContain("Restarts because exit code 42 matches restartPolicyRules[0] (In [42]), whatever the restartPolicy (the container's Never, the pod's Never).");
    expect(report.backoff).toBeDefined();
    const text = (await h.triage("app-lab")).out;
    expect(text).toContain("  Restarts because exit code 42 matches restartPolicyRules[0] (In [42])");
    expect(text).toContain("Back-off:");
    h.agent.close();
  });

  test("under pod Never, exit 1 matching no rule: not restarted, the container's Never applies; no back-off section", async () => {
    using dir = tempDir();
    const h = await run(dir.path, { exitAfterMs: 1000, exitCode: 1 }, { restartPolicy: "Never", restartPolicyRules: [inCodes(42)] }, { restartPolicy: "Never" });
    const report = await h.report("app-lab");
    expect(report.pod.phase).toBe("Failed");
    expect(report.verdict.cause).toBe("app-error");
    expect(report.verdict.details).toContain("Not restarted: exit 1 matches no rule (In [42]) and the container's restartPolicy is Never.");
    expect(report.backoff).toBeUndefined();
    h.agent.close();
  });

  test("a container's own Never under pod Always: not restarted, and triage says the container's policy, not the pod's, decided", async () => {
    using dir = tempDir();
    const h = await run(dir.path, { exitAfterMs: 1000, exitCode: 3 }, { restartPolicy: "Never" });
    const report = await h.report("app-lab");
    expect(report.verdict.details).toContain("Not restarted: the container's own restartPolicy Never applies to exit 3, not the pod's Always.");
    expect(report.backoff).toBeUndefined();
    h.agent.close();
  });

  test("exit 0 restarted by a NotIn rule is completed-restarted, naming the rule", async () => {
    using dir = tempDir();
    const notIn: ContainerRestartRule = { action: "Restart", exitCodes: { operator: "NotIn", values: [1] } };
    const h = await run(dir.path, { exitAfterMs: 1000, exitCode: 0 }, { restartPolicy: "Never", restartPolicyRules: [notIn] }, { restartPolicy: "Never" });
    const report = await h.report("app-lab");
    expect(report.verdict.cause).toBe("completed-restarted");
    expect(report.verdict.summary).toContain("and restartPolicyRules[0] (NotIn [1]) starts it again");
    h.agent.close();
  });

  test("an init container with its own Never under pod Always fails the pod, and the verdict says its policy did", async () => {
    using dir = tempDir();
    const h = await run(dir.path, { exitAfterMs: 500, exitCode: 4 }, { restartPolicy: "Never", restartPolicyRules: [inCodes(3)] }, { init: true });
    const report = await h.report("app-lab", { container: "app" });
    expect(report.pod.phase).toBe("Failed");
    expect(report.verdict.summary).toStartWith("Init container app failed and the pod has failed (its restartPolicy Never)");
    expect(report.verdict.details).toContain("Not restarted: exit 4 matches no rule (In [3]) and the container's restartPolicy is Never.");
    h.agent.close();
  });

  test("a pod with no container policy keeps its report as before: no rule line", async () => {
    using dir = tempDir();
    const h = await run(dir.path, { exitAfterMs: 1000, exitCode: 1 }, {}, { restartPolicy: "Never" });
    const report = await h.report("app-lab");
    expect(report.verdict.details.some((d: string) => d.includes("restartPolicy"))).toBe(false);
    h.agent.close();
  });
});
