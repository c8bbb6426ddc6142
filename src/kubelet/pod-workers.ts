/**
 * One worker per pod, like the kubelet's podWorkers: syncs of one pod never overlap, syncs of
 * different pods run concurrently, and a request that arrives while a sync runs is coalesced into
 * one more sync afterwards. So a slow image pull in one pod never holds up another.
 */
import type { PodKey } from "../manifest/types.ts";

export class PodWorkers {
  private readonly running = new Map<PodKey, Promise<void>>();
  private readonly again = new Set<PodKey>();

  constructor(
    private readonly syncPod: (key: PodKey) => Promise<void>,
    private readonly onError: (key: PodKey, error: unknown) => void,
  ) {}

  dispatch(key: PodKey): void {
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    this.running.set(key, this.loop(key));
  }

  /** Resolves once no pod has a sync running or queued. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  busy(): boolean {
    return this.running.size > 0;
  }

  /** Rejects only if `onError` throws; the worker is released either way. */
  private async loop(key: PodKey): Promise<void> {
    try {
      do {
        this.again.delete(key);
        try {
          await this.syncPod(key);
        } catch (error) {
          this.onError(key, error);
        }
      } while (this.again.has(key));
    } finally {
      // In the same synchronous step as the last check of `again`, so no request can fall between;
      // and on every path, or the pod would be "busy" for good and never synced again.
      this.running.delete(key);
      if (this.again.delete(key)) this.dispatch(key);
    }
  }
}
