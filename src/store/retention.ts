/**
 * What keeps the agent's database bounded, at a cost that does not grow with history:
 * - a pod's events are capped when a row is inserted: the pod's count is one primary-key read
 *   (event_counts, kept by triggers), and the rows over the cap are the oldest few of its
 *   events_by_pod range, so each insert deletes at most what it added;
 * - events and deleted pods past the TTL (and deleted pods beyond the newest `maxDeletedPods`) go
 *   on a timer, in batches taken from the front of an index: a pass that finds a full batch leaves
 *   the rest to the next save, so no transaction holds the loop for long after a week offline.
 * Attempts are capped per container, and go with their pod, by triggers (migrations/0008).
 */
import type { Clock } from "../clock.ts";
import type { WriteStatements } from "./write-statements.ts";

export interface RetentionSettings {
  /** Events whose last occurrence is older than this are pruned, and pods deleted longer ago. Default 24h. */
  eventTtlMs: number;
  /** At most this many events are kept per pod, the newest by last occurrence. Default 1000. */
  maxEventsPerPod: number;
  /** At most this many deleted pods are kept for `describe`, the most recently deleted. Default 1000. */
  maxDeletedPods: number;
  /** Expiry runs at most this often. Default 60s. */
  intervalMs: number;
  /** Rows one expiry pass deletes per table at most. Default 1000. */
  batch: number;
}

/**
 * One day of events answers "what happened last night", which the API server's one hour does not.
 * Repeats fold into one row's count, so a pod's rows grow only with distinct messages (a probe
 * whose output changes each time). 1000 is over three days of what the kubelet's own spam filter
 * lets through for one object (a burst of 25, then one per 5 minutes: about 300 a day), and still a
 * `describe` one can read; a pod past it keeps its newest rows.
 */
export const DEFAULT_RETENTION: RetentionSettings = {
  eventTtlMs: 24 * 3_600_000,
  maxEventsPerPod: 1000,
  maxDeletedPods: 1000,
  intervalMs: 60_000,
  batch: 1000,
};

export interface Pruned {
  events: number;
  pods: number;
}

export class Retention {
  private lastExpiry: number;

  constructor(
    private readonly sql: WriteStatements,
    private readonly clock: Clock,
    readonly settings: RetentionSettings,
  ) {
    this.lastExpiry = clock.now();
  }

  /** Whether the timer's expiry pass is due. */
  get due(): boolean {
    return this.clock.now() - this.lastExpiry >= this.settings.intervalMs;
  }

  /** Inside the transaction that inserted an event row for `podUid`: its oldest rows over the cap go. */
  capPodEvents(podUid: string): number {
    const row = this.sql.eventCount.get(podUid) as { events: number } | null;
    const over = (row?.events ?? 0) - this.settings.maxEventsPerPod;
    if (over <= 0) return 0;
    return this.compact(this.sql.pruneOldestOfPod.all(podUid, over));
  }

  /** Inside a transaction: one batch of expired events and deleted pods, and deleted pods over their cap. */
  expire(): Pruned {
    const now = this.clock.now();
    const cutoff = now - this.settings.eventTtlMs;
    const { batch } = this.settings;
    const events = this.compact(this.sql.pruneExpiredEvents.all(cutoff, batch));
    const expiredPods = this.compact(this.sql.pruneExpiredPods.all(cutoff, batch));
    const overCap = this.compact(this.sql.pruneDeletedPodsOverCap.all(batch, this.settings.maxDeletedPods));
    const full = events === batch || expiredPods === batch || overCap === batch;
    // A full batch leaves more behind: the next save goes on with it instead of waiting an interval.
    this.lastExpiry = full ? now - this.settings.intervalMs : now;
    return { events, pods: expiredPods + overCap };
  }

  /** Records the highest revision deleted: a watch from before it may have missed it (410 Expired). */
  private compact(rows: unknown[]): number {
    let highest = 0;
    for (const row of rows as { revision: number }[]) highest = Math.max(highest, row.revision);
    if (highest > 0) this.sql.raiseCompaction.run(highest);
    return rows.length;
  }
}
