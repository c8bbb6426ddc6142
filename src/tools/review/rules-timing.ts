/**
 * Is each probe's timing right? A large initialDelaySeconds delays hang detection on every start
 * (a startup probe gives the same start-up time and lets liveness begin as soon as the app is up),
 * a timeout at or over the period makes the probe late, failureThreshold 1 on liveness restarts on
 * one slow answer, and a slow starter without a startup probe is killed before it is up.
 */
import type { ContainerHistory } from "./history.ts";
import { describeKillTimes, times } from "./history.ts";
import type { Finding, ReviewContainer, ReviewProbe } from "./model.ts";
import { finding } from "./rule-support.ts";
import { detectionFormula, hangDetectionFromStartSeconds } from "./timing.ts";
import type { Edit } from "./edits.ts";

/** An initial delay from which a startup probe is the better tool. */
export const LARGE_INITIAL_DELAY_SECONDS = 30;
/** The failureThreshold a corrected liveness probe gets (the API default). */
const LIVENESS_FAILURE_THRESHOLD = 3;

export function timingFindings(container: ReviewContainer, history?: ContainerHistory): Finding[] {
  const out: Finding[] = [];
  const { liveness, readiness, startup } = container.probes;
  for (const probe of [liveness, readiness, startup]) {
    if (probe) out.push(...timeoutFindings(container, probe, history));
  }
  if (!liveness) return out;
  if (liveness.timing.failureThreshold === 1) {
    out.push(
      finding({
        id: "liveness-failure-threshold-1",
        category: "timing",
        severity: "warning",
        container,
        probe: liveness,
        field: ["failureThreshold"],
        message: "liveness has failureThreshold 1: one slow or dropped answer (a GC pause, a busy node) restarts the container",
        fix: `allow a few failures in a row (failureThreshold: ${LIVENESS_FAILURE_THRESHOLD}) and shorten periodSeconds if detection must stay fast`,
        edits: [{ op: "set", path: [...liveness.path, "failureThreshold"], value: LIVENESS_FAILURE_THRESHOLD, comment: "review: was 1 (liveness-failure-threshold-1)" }],
        history,
      }),
    );
  }
  if (startup) return out;
  const delay = liveness.timing.initialDelaySeconds;
  const fromStart = hangDetectionFromStartSeconds(liveness.timing);
  if (delay >= LARGE_INITIAL_DELAY_SECONDS) {
    out.push(
      finding({
        id: "initial-delay-instead-of-startup-probe",
        category: "timing",
        severity: "warning",
        container,
        probe: liveness,
        field: ["initialDelaySeconds"],
        message: `liveness waits initialDelaySeconds ${delay} on every start, so a container that hangs at start is killed only after ${fromStart}s (${detectionFormula(liveness.timing, true)}), even when it started in 2s`,
        fix: "replace the delay with a startupProbe (same check) whose period x failureThreshold covers the slowest start; liveness then begins as soon as the app is up",
        edits: addStartupProbe(liveness, delay + liveness.timing.periodSeconds * liveness.timing.failureThreshold, `replaces livenessProbe.initialDelaySeconds ${delay}`),
        history,
      }),
    );
    return out;
  }
  const slowReadiness = readiness && readiness.timing.initialDelaySeconds >= LARGE_INITIAL_DELAY_SECONDS && readiness.timing.initialDelaySeconds > fromStart;
  const killedWhileStarting = history && history.livenessKills > 0 && history.killedAfterSeconds.length > 0 && history.killedAfterSeconds.every((seconds) => seconds <= fromStart + liveness.timing.periodSeconds);
  if (!slowReadiness && !killedWhileStarting) return out;
  const expected = readiness?.timing.initialDelaySeconds ?? 0;
  const seen = Math.max(0, ...(history?.killedAfterSeconds ?? []));
  const slowest = Math.max(expected, seen);
  const source = seen >= expected ? "the longest a killed attempt ran" : "readiness's initialDelaySeconds";
  const limit = `liveness kills a container that is not up within ${fromStart}s at most (${detectionFormula(liveness.timing, true)})`;
  const why = killedWhileStarting
    ? `liveness killed it ${times(history!.livenessKills)} and ${describeKillTimes(history!.killedAfterSeconds)}, while it was still starting, inside the startup budget you do not have: ${limit}`
    : `readiness waits ${readiness!.timing.initialDelaySeconds}s for the app to start, but ${limit}`;
  out.push(
    finding({
      id: "liveness-without-startup-probe",
      category: "timing",
      severity: "warning",
      container,
      probe: liveness,
      field: [],
      message: `a slow starter with liveness and no startup probe: ${why}`,
      fix: "add a startupProbe (same check as liveness) whose period x failureThreshold covers the slowest start with room to spare",
      edits: addStartupProbe(liveness, 2 * slowest, `twice ${source} (${slowest}s)`),
      history,
    }),
  );
  return out;
}

function timeoutFindings(container: ReviewContainer, probe: ReviewProbe, history?: ContainerHistory): Finding[] {
  const { timeoutSeconds, periodSeconds } = probe.timing;
  // With a 1s period no timeout can be shorter: the API's minimum for both is 1.
  if (periodSeconds <= 1 || timeoutSeconds < periodSeconds) return [];
  const period = timeoutSeconds * 2;
  return [
    finding({
      id: "timeout-not-below-period",
      category: "timing",
      severity: "warning",
      container,
      probe,
      field: ["timeoutSeconds"],
      message: `the ${probe.kind} probe's timeoutSeconds ${timeoutSeconds} is not below its periodSeconds ${periodSeconds}: a slow answer delays the next check, so probes run late and a hang takes longer to detect than the period says`,
      fix: `keep the timeout under the period: periodSeconds ${period} for this timeout, or a faster endpoint and a shorter timeout`,
      edits: [{ op: "set", path: [...probe.path, "periodSeconds"], value: period, comment: `review: was ${periodSeconds}, not above timeoutSeconds ${timeoutSeconds} (timeout-not-below-period)` }],
      history,
    }),
  ];
}

/**
 * A startupProbe running the liveness check at liveness's period, with enough failures to cover
 * `budgetSeconds`, and liveness's initial delay removed (the startup probe now waits instead).
 */
function addStartupProbe(liveness: ReviewProbe, budgetSeconds: number, reason: string): Edit[] {
  const period = liveness.timing.periodSeconds;
  const failureThreshold = Math.max(LIVENESS_FAILURE_THRESHOLD, Math.ceil(budgetSeconds / period));
  const container = liveness.path.slice(0, -1);
  const handler = handlerObject(liveness);
  const edits: Edit[] = [
    {
      op: "set",
      path: [...container, "startupProbe"],
      value: { ...handler, periodSeconds: period, failureThreshold },
      comment: `review: added: ${period * failureThreshold}s to start (period ${period}s x failure ${failureThreshold}), ${reason}`,
    },
  ];
  if (liveness.timing.initialDelaySeconds > 0) {
    edits.push({ op: "delete", path: [...liveness.path, "initialDelaySeconds"], comment: "" });
  }
  return edits;
}

function handlerObject(probe: ReviewProbe): Record<string, unknown> {
  const { type, ...rest } = probe.handler;
  // The pod's own endpoint: a host (another service) is never copied into the startup check.
  const fields = Object.fromEntries(Object.entries(rest).filter(([key, value]) => key !== "host" && value !== "" && !(key === "scheme" && value === "HTTP")));
  return { [type]: fields };
}
