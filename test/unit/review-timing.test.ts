import { describe, expect, test } from "bun:test";
import { PROBE_DEFAULTS } from "../../src/manifest/validation/validate-probe.ts";
import type { ProbeTiming } from "../../src/tools/review/model.ts";
import { parseReviewText } from "../../src/tools/review/load.ts";
import { reviewTarget } from "../../src/tools/review/reviewer.ts";
import { hangDetectionFromStartSeconds, hangDetectionSeconds, startupBudgetSeconds } from "../../src/tools/review/timing.ts";

const timing = (overrides: Partial<ProbeTiming> = {}): ProbeTiming => ({ ...PROBE_DEFAULTS, ...overrides });

describe("hang detection and startup budget arithmetic", () => {
  test("the defaults: a hang is killed within period 10 x failure 3 + timeout 1 = 31s", () => {
    expect(hangDetectionSeconds(timing())).toBe(31);
    expect(hangDetectionFromStartSeconds(timing())).toBe(31);
  });

  test("the initial delay counts only from the container's start", () => {
    const probe = timing({ initialDelaySeconds: 45, periodSeconds: 5, failureThreshold: 4, timeoutSeconds: 3 });
    expect(hangDetectionSeconds(probe)).toBe(5 * 4 + 3);
    expect(hangDetectionFromStartSeconds(probe)).toBe(45 + 5 * 4 + 3);
  });

  test("startup budget: period x failureThreshold, after its own initial delay", () => {
    expect(startupBudgetSeconds(timing({ periodSeconds: 2, failureThreshold: 30 }))).toBe(60);
    expect(startupBudgetSeconds(timing({ initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 12 }))).toBe(125);
    expect(startupBudgetSeconds(timing())).toBe(30);
  });

  test("unset and 0 fields take the API defaults when a manifest is read", () => {
    const file = parseReviewText(
      "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: a\n      livenessProbe: {tcpSocket: {port: 80}, periodSeconds: 0, initialDelaySeconds: 20}\n      startupProbe: {tcpSocket: {port: 80}, failureThreshold: 6}\n",
      "p.yaml",
      "yaml",
    );
    const probes = file.targets[0]!.containers[0]!.probes;
    expect(probes.liveness!.timing).toEqual({ initialDelaySeconds: 20, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
    expect(probes.startup!.timing.failureThreshold).toBe(6);
  });
});

describe("the per-probe summary", () => {
  function summaries(container: string) {
    const file = parseReviewText(`kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: a\n      ports: [{containerPort: 80}]\n${container}`, "p.yaml", "yaml");
    return reviewTarget(file.targets[0]!).probes;
  }

  test("without a startup probe: the detection from start includes the initial delay", () => {
    const [liveness] = summaries("      livenessProbe: {tcpSocket: {port: 80}, initialDelaySeconds: 15, periodSeconds: 5, timeoutSeconds: 2}\n      readinessProbe: {tcpSocket: {port: 80}}\n");
    expect(liveness).toMatchObject({ probe: "liveness", detectSeconds: 17, detectFromStartSeconds: 32 });
    expect(liveness!.note).toBe("a hang is killed within 17s (period 5s x failure 3 + timeout 2s); a hang at start within 32s (initialDelay 15s + period 5s x failure 3 + timeout 2s)");
  });

  test("a startup probe gates liveness and readiness: said, and no from-start figure", () => {
    const [liveness, readiness, startup] = summaries(
      "      livenessProbe: {tcpSocket: {port: 80}}\n      readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 3, failureThreshold: 2}\n      startupProbe: {tcpSocket: {port: 80}, periodSeconds: 5, failureThreshold: 24}\n",
    );
    expect(liveness!.detectFromStartSeconds).toBeUndefined();
    expect(liveness!.note).toBe("a hang is killed within 31s (period 10s x failure 3 + timeout 1s); runs once the startup probe passes (within 120s)");
    expect(readiness).toMatchObject({ detectSeconds: 7, note: "unready within 7s of a hang (period 3s x failure 2 + timeout 1s); runs once the startup probe passes (within 120s)" });
    expect(startup).toMatchObject({ startupBudgetSeconds: 120, note: "120s to start (period 5s x failure 24) before it is killed" });
  });

  test("timeout equal to a 1s period is not a finding (no shorter timeout exists); at 2s it is", () => {
    const ids = (period: number) => {
      const file = parseReviewText(`kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: a\n      readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: ${period}, timeoutSeconds: ${period}}\n`, "p.yaml", "yaml");
      return reviewTarget(file.targets[0]!).findings.map((finding) => finding.id);
    };
    expect(ids(1)).toEqual([]);
    expect(ids(2)).toEqual(["timeout-not-below-period"]);
  });
});
