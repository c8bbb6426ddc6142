/**
 * The one waiting rule of every retry and back-off here (container restarts, failed pod syncs,
 * adoption retries, the docker events reconnect, triage's outlook): a wait that doubles and never
 * passes its cap. Pure, so each user keeps its own state (a step count or the previous wait).
 */

/**
 * `startMs` doubled `doublings` times, never above `capMs`: the next wait after `startMs` is
 * `cappedDoubling(startMs, capMs, 1)`, and the n-th wait of a curve from `base` is
 * `cappedDoubling(base, capMs, n - 1)`. A start above the cap is the cap.
 */
export function cappedDoubling(startMs: number, capMs: number, doublings: number): number {
  // 2^60 ms is far past any cap: bounding the exponent keeps the product finite.
  return Math.min(startMs * 2 ** Math.min(Math.max(doublings, 0), 60), capMs);
}
