/**
 * When the restart back-off will next let the container start, and when it forgets the crashes:
 * the same rule as kubelet/backoff.ts (the wait is measured from the finish; an entry whose last
 * restart is more than 2 x cap before the finish is forgotten), read from the checkpointed entry.
 */
import { backoffForgotten, type BackoffSettings } from "../kubelet/backoff.ts";
import { goDuration } from "../status/go-duration.ts";

export interface BackoffOutlook {
  /** The wait for the crash being waited out (0: restart at once). */
  waitMs: number;
  /** When the next start is allowed (the finish plus the wait). */
  nextStartAt: number;
  /** The wait after one more quick crash. */
  nextWaitMs: number;
  /** Clean running that forgets the back-off: 2 x cap. */
  resetAfterMs: number;
  /** A crash after this time starts over at once (the last restart plus 2 x cap); undefined with no entry. */
  resetAt?: number;
}

/** The outlook for a container that finished at `finishedAt`, given its checkpointed entry (if any). */
export function backoffOutlook(entry: { delayMs: number; updatedAt: number } | undefined, finishedAt: number, settings: BackoffSettings): BackoffOutlook {
  const resetAfterMs = 2 * settings.capMs;
  if (!entry || backoffForgotten(entry, finishedAt, settings)) {
    return { waitMs: 0, nextStartAt: finishedAt, nextWaitMs: settings.baseMs, resetAfterMs };
  }
  return {
    waitMs: entry.delayMs,
    nextStartAt: finishedAt + entry.delayMs,
    nextWaitMs: Math.min(entry.delayMs * 2, settings.capMs),
    resetAfterMs,
    resetAt: entry.updatedAt + resetAfterMs,
  };
}

export function capText(settings: BackoffSettings, fromFlags: boolean): string {
  return `2 x cap ${goDuration(settings.capMs)}${fromFlags ? "" : ", the kubelet's default: pass --backoff-max if the agent ran with another"}`;
}
