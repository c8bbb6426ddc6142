/**
 * What a restart timeline is drawn from: each container's attempts, each already classified by how
 * it ended, and the marks (probe failures, readiness changes) on its row. Plain data, no store.
 */
import type { ContainerKind } from "../../runtime/runtime.ts";

/** How an attempt ended, which decides its glyph and colour. */
export type Ending = "completed" | "error" | "oom" | "probe-kill" | "stopped" | "running" | "unrecorded";

export interface TimelineAttempt {
  attempt: number;
  startedAt: number;
  /** Absent while the attempt is still running: its bar reaches now. */
  finishedAt?: number;
  exitCode?: number;
  /** The runtime's reason (Completed, Error, OOMKilled, StartError ...). */
  reason?: string;
  ending: Ending;
  /** The kill's event message, when a probe or the agent ended it. */
  killedBecause?: string;
}

export type MarkKind = "unhealthy" | "ready" | "not-ready";

/**
 * One occurrence of an event on a container's row. The store counts repeats of the same message
 * (first and last time, count), so a repeated event gives two marks carrying the count.
 */
export interface TimelineMark {
  at: number;
  kind: MarkKind;
  message: string;
  count: number;
  firstAt: number;
  lastAt: number;
}

export interface TimelineContainer {
  name: string;
  kind: ContainerKind;
  /** Oldest first. */
  attempts: TimelineAttempt[];
  marks: TimelineMark[];
  /** Waiting to restart now (CrashLoopBackOff): the wait after the last attempt reaches now. */
  waitingNow: boolean;
  /** Older attempts the query did not load (the store returns the newest ones). */
  unloadedAttempts: number;
  /** What its own restart policy and rules did (restart-note.ts); absent when it follows the pod's. */
  restartNote?: string;
}
