/**
 * The probe arithmetic, in whole seconds. The kubelet's probe worker ticks every periodSeconds
 * from a random offset and skips ticks before initialDelaySeconds, so the first probe after the
 * delay may come up to one period late; each failed probe may take its full timeout.
 */
import type { ProbeTiming } from "./model.ts";

/**
 * A hang that begins right after a passing probe: failureThreshold more ticks, one period apart,
 * the last of which fails only when its timeout runs out.
 */
export function hangDetectionSeconds(timing: ProbeTiming): number {
  return timing.periodSeconds * timing.failureThreshold + timing.timeoutSeconds;
}

/**
 * A container that hangs from its start, with no startup probe in front: the initial delay, then
 * (with the first tick up to a period late) the same failureThreshold ticks and the last timeout.
 */
export function hangDetectionFromStartSeconds(timing: ProbeTiming): number {
  return timing.initialDelaySeconds + hangDetectionSeconds(timing);
}

/**
 * How long a startup probe lets the application start: periodSeconds x failureThreshold after
 * its initial delay. Liveness and readiness do not run until it passes.
 */
export function startupBudgetSeconds(timing: ProbeTiming): number {
  return timing.initialDelaySeconds + timing.periodSeconds * timing.failureThreshold;
}

/** "10s x 3 + 1s" with the initial delay in front when it counts. */
export function detectionFormula(timing: ProbeTiming, withDelay: boolean): string {
  const core = `period ${timing.periodSeconds}s x failure ${timing.failureThreshold} + timeout ${timing.timeoutSeconds}s`;
  return withDelay && timing.initialDelaySeconds > 0 ? `initialDelay ${timing.initialDelaySeconds}s + ${core}` : core;
}

export function budgetFormula(timing: ProbeTiming): string {
  const core = `period ${timing.periodSeconds}s x failure ${timing.failureThreshold}`;
  return timing.initialDelaySeconds > 0 ? `initialDelay ${timing.initialDelaySeconds}s + ${core}` : core;
}
