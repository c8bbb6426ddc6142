/** The findings `triage` prints: one shape for text, markdown and JSON (render.ts). */
import type { BackoffOutlook } from "./backoff-outlook.ts";
import type { Cause, EndedBy } from "./exit-cause.ts";
import type { ContainerKind } from "./facts.ts";

/** Causes that are not an ended attempt: the container never got that far, or is fine. */
export type StateCause = "image-pull" | "waiting-for-init" | "init-running" | "not-started" | "readiness-failing" | "healthy";

/** How the container matters to the pod: an init container the pod waits for, a sidecar, an app container. */
export type Role = "init-blocking" | "init" | "sidecar" | "app";

/** A line the analysis used, with its time when it has one, and where it came from. */
export interface Evidence {
  at?: number;
  source: "lastState" | "state" | "attempts" | "event" | "log" | "backoff";
  text: string;
}

export interface NextStep {
  /** A command to run, when the step is one. */
  command?: string;
  text: string;
}

export interface TriageReport {
  pod: { namespace: string; name: string; phase: string; status: string; restartPolicy: string };
  container: { name: string; kind: ContainerKind; role: Role; restartCount: number; state: string };
  verdict: { cause: Cause | StateCause; endedBy?: EndedBy; summary: string; details: string[] };
  /** The ended attempt the verdict explains (lastState, or the terminated state). */
  exit?: { attempt?: number; exitCode: number; signal?: number; reason?: string; startedAt?: number; finishedAt?: number };
  evidence: Evidence[];
  /** Only for a container that will be restarted. */
  backoff?: BackoffOutlook & { lines: string[] };
  nextSteps: NextStep[];
  /** Other containers of the pod in trouble, worst first, as `name (reason)`. */
  alsoInTrouble: string[];
}
