/**
 * The probe review, pure: a pod spec's containers (and what happened to them, when known) in,
 * each probe's arithmetic and the findings about kind, endpoint and timing out.
 */
import type { PodHistory } from "./history.ts";
import type { Finding, ProbeSummary, ReviewContainer, ReviewTarget, TargetReview } from "./model.ts";
import { bySeverity } from "./model.ts";
import { endpointFindings } from "./rules-endpoint.ts";
import { kindFindings } from "./rules-kind.ts";
import { timingFindings } from "./rules-timing.ts";
import { describeTarget } from "./rule-support.ts";
import { budgetFormula, detectionFormula, hangDetectionFromStartSeconds, hangDetectionSeconds, startupBudgetSeconds } from "./timing.ts";

export function reviewTarget(target: ReviewTarget, history: PodHistory = new Map()): TargetReview {
  const findings: Finding[] = [];
  const probes: ProbeSummary[] = [];
  for (const container of target.containers) {
    const seen = history.get(container.name);
    findings.push(...kindFindings(target, container, seen), ...endpointFindings(container, seen), ...timingFindings(container, seen));
    probes.push(...summarize(container));
  }
  // A stable sort: errors first, then warnings, each in spec order.
  return { target, probes, findings: findings.sort(bySeverity) };
}

function summarize(container: ReviewContainer): ProbeSummary[] {
  const { liveness, readiness, startup } = container.probes;
  const out: ProbeSummary[] = [];
  const gate = startup ? `; runs once the startup probe passes (within ${startupBudgetSeconds(startup.timing)}s)` : "";
  if (liveness) {
    const detect = hangDetectionSeconds(liveness.timing);
    const summary: ProbeSummary = {
      container: container.name,
      probe: "liveness",
      target: describeTarget(liveness.handler),
      detectSeconds: detect,
      note: `a hang is killed within ${detect}s (${detectionFormula(liveness.timing, false)})${gate}`,
    };
    if (!startup) {
      summary.detectFromStartSeconds = hangDetectionFromStartSeconds(liveness.timing);
      if (liveness.timing.initialDelaySeconds > 0) {
        summary.note += `; a hang at start within ${summary.detectFromStartSeconds}s (${detectionFormula(liveness.timing, true)})`;
      }
    }
    out.push(summary);
  }
  if (readiness) {
    const detect = hangDetectionSeconds(readiness.timing);
    out.push({
      container: container.name,
      probe: "readiness",
      target: describeTarget(readiness.handler),
      detectSeconds: detect,
      note: `unready within ${detect}s of a hang (${detectionFormula(readiness.timing, false)})${gate}`,
    });
  }
  if (startup) {
    const budget = startupBudgetSeconds(startup.timing);
    out.push({
      container: container.name,
      probe: "startup",
      target: describeTarget(startup.handler),
      startupBudgetSeconds: budget,
      note: `${budget}s to start (${budgetFormula(startup.timing)}) before it is killed`,
    });
  }
  return out;
}
