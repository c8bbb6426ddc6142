/**
 * The words around the picture that both renderers print: what was left out or squeezed, events
 * whose middle occurrences the store does not keep, and one attempt spelled out (an SVG title).
 */
import type { TimelineLayout } from "./layout.ts";
import type { TimelineAttempt } from "./model.ts";
import { clockTime, shortDuration } from "./legend.ts";

/** Lines saying what the picture does not show at its true scale, or at all. */
export function timelineNotes(layout: TimelineLayout, utcOffsetMinutes: number): string[] {
  const notes: string[] = [];
  if (layout.hiddenAttempts > 0) {
    const which = layout.cutAt !== undefined ? `before ${clockTime(layout.cutAt, utcOffsetMinutes)} ` : "";
    notes.push(`${layout.hiddenAttempts} older ${layout.hiddenAttempts === 1 ? "attempt" : "attempts"} ${which}not shown (see: describe pod, or sql on attempts)`);
  } else if (layout.cutAt !== undefined) {
    notes.push(`history before ${clockTime(layout.cutAt, utcOffsetMinutes)} not shown`);
  }
  for (const range of layout.compressed) {
    const span = `${clockTime(range.fromAt, utcOffsetMinutes)} to ${clockTime(range.toAt, utcOffsetMinutes)}`;
    notes.push(`~ ${span} (${shortDuration(range.toAt - range.fromAt)}) is compressed; the rest is to one scale`);
  }
  for (const row of layout.rows) if (row.container.restartNote) notes.push(row.container.restartNote);
  for (const row of layout.rows) {
    const seen = new Set<string>();
    for (const { mark } of row.marks) {
      if (mark.count <= 2 || seen.has(mark.message)) continue;
      seen.add(mark.message);
      notes.push(
        `${row.container.name}: "${mark.message}" x${mark.count} from ${clockTime(mark.firstAt, utcOffsetMinutes)} to ${clockTime(mark.lastAt, utcOffsetMinutes)} (first and last marked)`,
      );
    }
  }
  return notes;
}

/** `crash attempt 2: 12:00:11 to 12:00:12 (1s), exit code 1, Error`. */
export function attemptSummary(container: string, attempt: TimelineAttempt, now: number, utcOffsetMinutes: number): string {
  const start = clockTime(attempt.startedAt, utcOffsetMinutes);
  const end = attempt.finishedAt === undefined ? "now" : clockTime(attempt.finishedAt, utcOffsetMinutes);
  const length = shortDuration((attempt.finishedAt ?? now) - attempt.startedAt);
  const outcome = attempt.finishedAt === undefined ? "running" : [`exit code ${attempt.exitCode ?? "unknown"}`, attempt.reason ?? "no reason recorded"].join(", ");
  const kill = attempt.killedBecause ? `; ${attempt.killedBecause}` : "";
  return `${container} attempt ${attempt.attempt}: ${start} to ${end} (${length}), ${outcome}${kill}`;
}
