/**
 * The restart timeline as columns, before any glyph or colour: per container, bars (attempts) and
 * waits as column ranges on one shared time axis, marks at their columns, and the axis ticks.
 * Pure: attempts, now and a width in; the text and SVG renderers only draw what this returns.
 */
import type { TimelineAttempt, TimelineContainer, TimelineMark } from "./model.ts";
import { slotWidths, type Slot } from "./scale.ts";

export type Segment =
  | { kind: "bar"; from: number; to: number; attempt: TimelineAttempt; clipped: boolean }
  | { kind: "wait"; from: number; to: number; waitMs: number; ongoing: boolean };

export interface LaidOutRow {
  container: TimelineContainer;
  /** Column ranges [from, to), left to right. */
  segments: Segment[];
  marks: { column: number; mark: TimelineMark }[];
  /** Attempts of this container not drawn: before the cut, or never loaded. */
  hiddenAttempts: number;
}

export interface Tick {
  column: number;
  at: number;
  /** Inside a long slot rather than where a row changes: labelled only where room is left. */
  interior?: boolean;
}

/** A slot this wide (and to scale) gets ticks inside it too, about this far apart. */
const INTERIOR_TICK_SPACING = 16;

export interface TimelineLayout {
  rows: LaidOutRow[];
  /** Columns drawn; `now` is at this column (one past the last). */
  columns: number;
  /** Where the axis starts (the first drawn instant) and ends. */
  startAt: number;
  now: number;
  /** Every instant where a row changes, with its column: candidates for labels. */
  ticks: Tick[];
  /** Column ranges drawn shorter than their length, with the instants they stand for. */
  compressed: { from: number; to: number; fromAt: number; toAt: number }[];
  /** Set when older history did not fit: nothing before this instant is drawn. */
  cutAt?: number;
  hiddenAttempts: number;
}

/** How many columns a slot gets on average at least, before older slots are cut: a bar, a wait and its label. */
const MIN_COLUMNS_PER_SLOT = 3;

interface Span {
  from: number;
  to: number;
  attempt?: TimelineAttempt;
  ongoing?: boolean;
  /** Where the span began before the cut moved its start. */
  clippedFrom?: number;
}

/** Lays out `containers` on `columns` columns ending at `now`. */
export function layoutTimeline(containers: TimelineContainer[], now: number, columns: number): TimelineLayout {
  const allSpans = containers.map((container) => spansOf(container, now));
  const cutAt = cutInstant(allSpans, now, Math.max(1, Math.floor(columns / MIN_COLUMNS_PER_SLOT)));
  const spans = allSpans.map((row) => (cutAt === undefined ? row : clip(row, cutAt)));
  const slots = slotsOf(spans, now);
  const { widths, compressed } = slotWidths(slots, columns);
  const starts: number[] = [];
  widths.reduce((column, width, index) => ((starts[index] = column), column + width), 0);
  const total = widths.reduce((sum, width) => sum + width, 0);
  const columnAt = (at: number) => columnOf(slots, starts, widths, total, at);

  const rows = containers.map((container, index) => {
    const rowSpans = spans[index]!;
    const drawn = new Set(rowSpans.flatMap((span) => (span.attempt ? [span.attempt] : [])));
    const marks = container.marks.filter((mark) => cutAt === undefined || mark.at >= cutAt).map((mark) => ({ column: Math.min(columnAt(mark.at), Math.max(0, total - 1)), mark }));
    const hiddenAttempts = container.unloadedAttempts + container.attempts.filter((attempt) => !drawn.has(attempt)).length;
    return { container, segments: segmentsOf(rowSpans, slots, starts, widths), marks, hiddenAttempts };
  });
  const ticks: Tick[] = [];
  slots.forEach((slot, index) => {
    if (index === 0 || slots[index - 1]!.from !== slot.from) ticks.push({ column: starts[index]!, at: slot.from });
    const width = widths[index]!;
    if (compressed.includes(index) || width < 2 * INTERIOR_TICK_SPACING) return;
    const count = Math.floor(width / INTERIOR_TICK_SPACING) - 1;
    for (let k = 1; k <= count; k++) {
      const column = starts[index]! + Math.round((k * width) / (count + 1));
      ticks.push({ column, at: slot.from + ((column - starts[index]!) / width) * (slot.to - slot.from), interior: true });
    }
  });
  ticks.push({ column: total, at: now });
  const startAt = slots[0]?.from ?? now;
  return {
    rows,
    columns: total,
    startAt,
    now,
    ticks,
    compressed: compressed.map((index) => ({ from: starts[index]!, to: starts[index]! + widths[index]!, fromAt: slots[index]!.from, toAt: slots[index]!.to })),
    ...(cutAt !== undefined && { cutAt }),
    hiddenAttempts: rows.reduce((sum, row) => sum + row.hiddenAttempts, 0),
  };
}

/** A container's bars and the waits between them, in time order. */
function spansOf(container: TimelineContainer, now: number): Span[] {
  const spans: Span[] = [];
  container.attempts.forEach((attempt, index) => {
    const previous = container.attempts[index - 1];
    if (previous?.finishedAt !== undefined) spans.push({ from: previous.finishedAt, to: Math.max(previous.finishedAt, attempt.startedAt) });
    spans.push({ from: Math.min(attempt.startedAt, now), to: Math.min(attempt.finishedAt ?? now, now), attempt });
  });
  const last = container.attempts.at(-1);
  if (container.waitingNow && last?.finishedAt !== undefined && last.finishedAt <= now) spans.push({ from: last.finishedAt, to: now, ongoing: true });
  return spans;
}

/**
 * The instant before which history is not drawn, when the slots outnumber what `maxSlots` allows:
 * whole instants are kept from the newest back, so a zero-length bar is never split from its instant.
 */
function cutInstant(spans: Span[][], now: number, maxSlots: number): number | undefined {
  const instants = slotInstants(spans, now);
  let slots = 0;
  for (let index = instants.length - 1; index >= 0; index--) {
    const groupSlots = instants[index]!.zeroSlots + (index < instants.length - 1 ? 1 : 0);
    if (slots + groupSlots > maxSlots) return instants[index + 1]?.at;
    slots += groupSlots;
  }
  return undefined;
}

function clip(spans: Span[], cutAt: number): Span[] {
  return spans.filter((span) => span.to > cutAt || (span.to === cutAt && span.from === cutAt)).map((span) => (span.from < cutAt ? { ...span, from: cutAt, clippedFrom: span.from } : span));
}

/**
 * Each distinct instant, `now` included (the axis ends there even when every row stopped before),
 * and how many zero-length columns it needs (the most zero-length spans one row has there).
 */
function slotInstants(spans: Span[][], now: number): { at: number; zeroSlots: number }[] {
  const zeroSlots = new Map<number, number>([[now, 0]]);
  for (const row of spans) {
    const perRow = new Map<number, number>();
    for (const span of row) {
      if (!zeroSlots.has(span.from)) zeroSlots.set(span.from, 0);
      if (!zeroSlots.has(span.to)) zeroSlots.set(span.to, 0);
      if (span.from === span.to) perRow.set(span.from, (perRow.get(span.from) ?? 0) + 1);
    }
    for (const [at, count] of perRow) zeroSlots.set(at, Math.max(zeroSlots.get(at)!, count));
  }
  return [...zeroSlots].sort(([a], [b]) => a - b).map(([at, zero]) => ({ at, zeroSlots: zero }));
}

function slotsOf(spans: Span[][], now: number): Slot[] {
  const instants = slotInstants(spans, now);
  if (instants.length === 1) return [{ from: now, to: now }];
  const slots: Slot[] = [];
  instants.forEach(({ at, zeroSlots }, index) => {
    for (let zero = 0; zero < zeroSlots; zero++) slots.push({ from: at, to: at });
    const next = instants[index + 1];
    if (next) slots.push({ from: at, to: next.at });
  });
  return slots;
}

/** The row's spans over the slots, merged into column ranges. */
function segmentsOf(spans: Span[], slots: Slot[], starts: number[], widths: number[]): Segment[] {
  const segments: Segment[] = [];
  let lastSpan: Span | undefined;
  const zeroSeen = new Map<number, number>();
  let previousSlotFrom: number | undefined;
  slots.forEach((slot, index) => {
    if (slot.from !== previousSlotFrom) zeroSeen.clear();
    previousSlotFrom = slot.from;
    let span: Span | undefined;
    if (slot.from === slot.to) {
      const zeroSpans = spans.filter((s) => s.from === slot.from && s.to === slot.from);
      const seen = zeroSeen.get(slot.from) ?? 0;
      zeroSeen.set(slot.from, seen + 1);
      span = zeroSpans[seen] ?? spans.find((s) => s.from <= slot.from && slot.from < s.to);
    } else span = spans.find((s) => s.from <= slot.from && slot.to <= s.to && s.from < s.to);
    if (!span) return;
    const from = starts[index]!;
    const to = from + widths[index]!;
    const last = segments.at(-1);
    if (last && last.to === from && lastSpan === span) {
      last.to = to;
      return;
    }
    lastSpan = span;
    segments.push(
      span.attempt
        ? { kind: "bar", from, to, attempt: span.attempt, clipped: span.clippedFrom !== undefined }
        : { kind: "wait", from, to, waitMs: span.to - (span.clippedFrom ?? span.from), ongoing: span.ongoing === true },
    );
  });
  return segments;
}

/** The column of an instant: proportional inside its slot. */
function columnOf(slots: Slot[], starts: number[], widths: number[], total: number, at: number): number {
  for (let index = slots.length - 1; index >= 0; index--) {
    const slot = slots[index]!;
    if (slot.from > at) continue;
    if (slot.to === slot.from) return starts[index]!;
    if (at >= slot.to) return starts[index]! + widths[index]!;
    return starts[index]! + Math.floor(((at - slot.from) / (slot.to - slot.from)) * widths[index]!);
  }
  return at < (slots[0]?.from ?? 0) ? 0 : total;
}
