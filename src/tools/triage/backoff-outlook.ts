/**
 * When the restart back-off will next let the container start, and when it forgets the crashes:
 * the same rule as kubelet/backoff.ts (the wait is measured from the finish; an entry whose last
 * restart is more than 2 x cap before the finish is forgotten), read from the checkpointed entry.
 */
import { cappedDoubling } from "../../capped-doubling.ts";
import { backoffForgotten, type BackoffSettings } from "../../kubelet/backoff.ts";
import { goDuration } from "../../printers/go-duration.ts";

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
    nextWaitMs: cappedDoubling(entry.delayMs, settings.capMs, 1),
    resetAfterMs,
    resetAt: entry.updatedAt + resetAfterMs,
  };
}

/** Where triage's back-off settings came from: its own flags, the agent's record, or the kubelet's default. */
export type BackoffSource = "flags" | "agent" | "default";

const SOURCE_NOTES: Record<BackoffSource, string> = {
  flags: "",
  agent: ", as the agent ran",
  default: ", the kubelet's default: no agent recorded its own; pass --backoff-max if it ran with another",
};

export function capText(settings: BackoffSettings, source: BackoffSource): string {
  return `2 x cap ${goDuration(settings.capMs)}${SOURCE_NOTES[source]}`;
}
