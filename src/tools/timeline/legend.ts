/**
 * How each kind of bar and mark is drawn, for both renderers and their legends: one table, so the
 * text glyph, the terminal colour and the SVG fill of an ending cannot drift apart.
 */
import type { TimelineLayout } from "./layout.ts";
import type { Ending, MarkKind } from "./model.ts";

export interface Look {
  glyph: string;
  label: string;
  /** SGR colour code for a terminal. */
  ansi: number;
  fill: string;
}

export const ENDINGS: Record<Ending, Look> = {
  completed: { glyph: "=", label: "Completed (exit 0)", ansi: 32, fill: "#2e9d4b" },
  error: { glyph: "#", label: "Error", ansi: 31, fill: "#d7263d" },
  oom: { glyph: "M", label: "OOMKilled", ansi: 35, fill: "#8e44ad" },
  "probe-kill": { glyph: "K", label: "killed by liveness/startup probe", ansi: 33, fill: "#e69b00" },
  stopped: { glyph: "S", label: "stopped by the agent", ansi: 34, fill: "#3b6fb6" },
  running: { glyph: ">", label: "running", ansi: 36, fill: "#17a2b8" },
  unrecorded: { glyph: "?", label: "end not recorded", ansi: 90, fill: "#bbbbbb" },
};

export const MARKS: Record<MarkKind, Look> = {
  unhealthy: { glyph: "!", label: "probe failed", ansi: 33, fill: "#e69b00" },
  "not-ready": { glyph: "-", label: "not ready", ansi: 31, fill: "#d7263d" },
  ready: { glyph: "+", label: "ready", ansi: 32, fill: "#2e9d4b" },
};

/** When two marks share a column, the one shown: a failure before a readiness change. */
export const MARK_PRIORITY: MarkKind[] = ["unhealthy", "not-ready", "ready"];

export const WAIT = { glyph: ".", label: "back-off wait (its length)", ansi: 2, fill: "#999999" } as const;
export const COMPRESSED = { glyph: "~", label: "time compressed" } as const;

export interface LegendContents {
  endings: Ending[];
  waits: boolean;
  marks: MarkKind[];
  compressed: boolean;
}

/** What the picture uses, in the table's order: the legend names only that. */
export function legendContents(layout: TimelineLayout): LegendContents {
  const segments = layout.rows.flatMap((row) => row.segments);
  const endings = new Set(segments.flatMap((segment) => (segment.kind === "bar" ? [segment.attempt.ending] : [])));
  const marks = new Set(layout.rows.flatMap((row) => row.marks.map((placed) => placed.mark.kind)));
  return {
    endings: (Object.keys(ENDINGS) as Ending[]).filter((ending) => endings.has(ending)),
    waits: segments.some((segment) => segment.kind === "wait"),
    marks: MARK_PRIORITY.filter((kind) => marks.has(kind)),
    compressed: layout.compressed.length > 0,
  };
}

/** Durations on the picture: `0s`, `45s`, `2m`, `2m30s`, `1h5m`. */
export function shortDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d${hours % 24}h`;
}

/** `12:00:31` in the given offset from UTC. */
export function clockTime(ms: number, utcOffsetMinutes: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000 + utcOffsetMinutes * 60_000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** `+0000`, `-0500`. */
export function utcOffset(utcOffsetMinutes: number): string {
  const two = (n: number) => String(n).padStart(2, "0");
  const offset = Math.abs(utcOffsetMinutes);
  return `${utcOffsetMinutes < 0 ? "-" : "+"}${two(Math.floor(offset / 60))}${two(offset % 60)}`;
}
