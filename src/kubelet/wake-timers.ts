/**
 * One armed timer per pod, at the earliest time anything asked for: back-off expiry, a grace
 * deadline, the next probe. Asking for a later time than the armed one is a no-op, so a pass that
 * asks many times costs one timer.
 */
import type { Clock } from "../clock.ts";
import type { PodKey } from "../manifest/types.ts";

export class WakeTimers {
  private readonly armed = new Map<PodKey, { at: number; cancel: () => void }>();

  constructor(
    private readonly clock: Clock,
    private readonly onWake: (key: PodKey) => void,
  ) {}

  /** Makes sure `key` is woken no later than `at` (epoch ms). */
  wakeAt(key: PodKey, at: number): void {
    const current = this.armed.get(key);
    if (current && current.at <= at) return;
    current?.cancel();
    const cancel = this.clock.setTimeout(() => {
      this.armed.delete(key);
      this.onWake(key);
    }, at - this.clock.now());
    this.armed.set(key, { at, cancel });
  }

  cancel(key: PodKey): void {
    this.armed.get(key)?.cancel();
    this.armed.delete(key);
  }

  clear(): void {
    for (const wake of this.armed.values()) wake.cancel();
    this.armed.clear();
  }
}
