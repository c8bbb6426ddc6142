/**
 * What the probe review works on and what it returns: the probes of one pod spec (a Pod's, or the
 * pod template of a workload), read from the manifest as written, and the findings about them.
 */
import type { FieldPath } from "../../manifest/errors.ts";
import type { ProbeKind } from "../../manifest/types.ts";
import type { Edit } from "./edits.ts";

export type Severity = "error" | "warning" | "info";
export type FindingCategory = "kind" | "endpoint" | "timing";

/** A port as the probe names it: a number, or the name of one of the container's ports. */
export type PortRef = number | string;

export type ReviewHandler =
  | { type: "httpGet"; host: string; path: string; port: PortRef; scheme: string }
  | { type: "tcpSocket"; host: string; port: PortRef }
  | { type: "exec"; command: string[] }
  | { type: "grpc"; port: PortRef };

export interface ProbeTiming {
  initialDelaySeconds: number;
  timeoutSeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

export interface ReviewProbe {
  kind: ProbeKind;
  /** Where the probe is, from the document's root: `spec.containers[0].livenessProbe`. */
  path: FieldPath;
  handler: ReviewHandler;
  /** With the API server's defaults where a field is unset (or 0). */
  timing: ProbeTiming;
}

export interface ReviewPort {
  name?: string;
  containerPort: number;
  protocol: string;
}

export interface ReviewContainer {
  name: string;
  path: FieldPath;
  ports: ReviewPort[];
  /** A native sidecar (an init container with restartPolicy Always): the only init container that may have probes. */
  sidecar: boolean;
  /**
   * It runs until stopped: a long-running kind whose restart policy for it is Always, the
   * container's own (KEP-5307) else the pod's. A container with its own Never or OnFailure (a
   * setup step beside a server, restarted at most on the exit codes its rules name) runs to completion.
   */
  longRunning: boolean;
  probes: Partial<Record<ProbeKind, ReviewProbe>>;
}

/** One pod spec to review: a Pod's, or a workload's template. */
export interface ReviewTarget {
  /** The object's kind and name as written: `Deployment web`. */
  kind: string;
  name: string;
  /** The document's position in its file (0 for the first). */
  document: number;
  /** The pod spec, from the document's root: `spec.template.spec`. */
  specPath: FieldPath;
  /** Long-running pods serve traffic; a Job's pods run to completion. */
  longRunning: boolean;
  containers: ReviewContainer[];
}

export interface Finding {
  /** Stable, for scripts and for silencing: `liveness-failure-threshold-1`. */
  id: string;
  category: FindingCategory;
  severity: Severity;
  container: string;
  probe?: ProbeKind;
  /** The field the finding is about, from the document's root. */
  path: FieldPath;
  message: string;
  fix: string;
  /** What happened (from `--describe` or the database) that backs the finding. */
  evidence?: string[];
  /** The correction `-o yaml` applies; absent when the fix needs a person (a new endpoint, a lighter command). */
  edits?: Edit[];
}

/** The arithmetic of one probe, shown beside the findings. */
export interface ProbeSummary {
  container: string;
  probe: ProbeKind;
  target: string;
  /** Liveness and readiness: the worst case from a hang to the kill (or to unready), while running. */
  detectSeconds?: number;
  /** The worst case from the container's start when it hangs at once; undefined when a startup probe gates it. */
  detectFromStartSeconds?: number;
  /** Startup: how long the application has to start before it is killed. */
  startupBudgetSeconds?: number;
  note: string;
}

export interface TargetReview {
  target: ReviewTarget;
  probes: ProbeSummary[];
  findings: Finding[];
}

const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

/** Warnings and errors fail the review (exit 1); info does not. */
export function failsReview(finding: Finding): boolean {
  return RANK[finding.severity] >= RANK.warning;
}

export function bySeverity(a: Finding, b: Finding): number {
  return RANK[b.severity] - RANK[a.severity];
}
