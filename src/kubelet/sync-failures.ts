/**
 * Failed pod syncs, per pod: when to retry (2s, doubling to 1 min, like the kubelet's pod workers
 * backing off a failing pod) and whether an error is news. A store that cannot write (disk full,
 * read-only file system) fails every pass the same way: that is one Warning, not one per retry.
 */
import { cappedDoubling } from "../capped-doubling.ts";
import type { PodKey } from "../manifest/types.ts";

/** The first retry of a failed pass, and how often a refused removal is written again. */
export const RETRY_BASE_MS = 2000;
const RETRY_CAP_MS = 60_000;

export interface SyncFailure {
  /** Wait before the retry. */
  retryInMs: number;
  /** False when the previous failure of this pod, with no success since, had the same message. */
  isNew: boolean;
}

export class SyncFailures {
  private readonly failures = new Map<PodKey, { count: number; message: string }>();

  failed(key: PodKey, message: string): SyncFailure {
    const previous = this.failures.get(key);
    const count = (previous?.count ?? 0) + 1;
    this.failures.set(key, { count, message });
    return { retryInMs: cappedDoubling(RETRY_BASE_MS, RETRY_CAP_MS, count - 1), isNew: previous?.message !== message };
  }

  /** Whether the pod's last pass failed: it is retried on its back-off, not sooner. */
  failing(key: PodKey): boolean {
    return this.failures.has(key);
  }

  /** A pass got through, saved included, or the pod is gone: the next failure is news and retried from the start. */
  reset(key: PodKey): void {
    this.failures.delete(key);
  }
}
