/**
 * What `triage` knows about a pod, gathered once from the database (gather.ts) and handed to the
 * pure analysis (analyze.ts): plain data, so every branch of the analysis can be tested on facts.
 * Times are epoch milliseconds.
 */
import type { BackoffSettings } from "../../kubelet/backoff.ts";
import type { BackoffSource } from "./backoff-outlook.ts";
import type { V1ContainerStatus } from "../../v1/v1.ts";
import type { ContainerRestartRule, RestartPolicy } from "../../manifest/types.ts";
import type { AttemptRow, EventRow } from "../../store/queries.ts";

export type ContainerKind = "init" | "sidecar" | "app";

/** One start of a container: the attempts table's row, without what the container's facts already say. */
export type AttemptFact = Omit<AttemptRow, "podUid" | "container" | "logPath">;

/** One event row, with the API server's repeat counting: only the first and last time are kept. */
export type EventFact = Pick<EventRow, "type" | "reason" | "message" | "count" | "firstAt" | "lastAt">;

export interface ContainerFacts {
  name: string;
  kind: ContainerKind;
  image: string;
  command: string[];
  probes: { startup: boolean; liveness: boolean; readiness: boolean };
  /** The container's own restart policy and rules (KEP-5307); absent: the pod's policy applies. */
  restartPolicy?: RestartPolicy;
  restartPolicyRules?: ContainerRestartRule[];
  /** The v1 status (state, lastState, restartCount); absent before the agent reported one. */
  status?: V1ContainerStatus;
  /** Every recorded start, oldest first. */
  attempts: AttemptFact[];
  /** This container's events, oldest last occurrence first. */
  events: EventFact[];
  /** The restart back-off entry as checkpointed: the wait for the current crash, and when it was last raised (a restart). */
  backoff?: { delayMs: number; updatedAt: number };
}

/** The last lines of the output of the attempt that ended, or why they could not be read. */
export type PreviousLog = { attempt: number; lines: string[] } | { attempt: number; unavailable: string };

export interface PodFacts {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  /** The STATUS column kubectl would print (CrashLoopBackOff, Init:Error ...). */
  statusColumn: string;
  restartPolicy: "Always" | "OnFailure" | "Never";
  /** Every init container has succeeded (or sidecar started) once. */
  initialized: boolean;
  /** Set when the pod no longer runs and this is its last record. */
  deletedAt?: number;
}

export interface TriageFacts {
  now: number;
  pod: PodFacts;
  /** The pod's own events (no container): a sandbox that could not be made, a failing sync. */
  podEvents: EventFact[];
  /** Every container of the pod, init (sidecars included) first, in spec order. */
  containers: ContainerFacts[];
  /** The one to explain (from -c, or the one in trouble). */
  container: string;
  backoffSettings: BackoffSettings;
  backoffSource: BackoffSource;
  previousLog?: PreviousLog;
  /** Flags the suggested commands need to reach the same database (`--db PATH`), or "". */
  commandFlags: string;
}
