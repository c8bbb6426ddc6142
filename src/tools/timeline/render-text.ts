/**
 * The timeline for a terminal: one line per container (and one under it for its marks), an axis
 * with clock times, the legend and the notes, all within `width` columns. Colour only when asked.
 */
import { layoutTimeline, type LaidOutRow, type TimelineLayout } from "./layout.ts";
import { COMPRESSED, ENDINGS, MARKS, MARK_PRIORITY, WAIT, clockTime, legendContents, shortDuration, utcOffset, type LegendContents, type Look } from "./legend.ts";
import type { TimelineContainer } from "./model.ts";
import { timelineNotes } from "./notes.ts";
import { GUTTER, plotColumns, rowLabel } from "./frame.ts";

export interface TimelineTextInput {
  /** `namespace/name`. */
  pod: string;
  containers: TimelineContainer[];
  now: number;
  /** What `now` is: the present, or when the pod was deleted. */
  ended: "now" | "deleted";
  width: number;
  color: boolean;
  utcOffsetMinutes: number;
}

export function timelineText(input: TimelineTextInput): string {
  const { label, plot } = plotColumns(input.containers, input.width);
  const layout = layoutTimeline(input.containers, input.now, plot);
  const paint = (look: Pick<Look, "ansi">, text: string) => (input.color && text.trim() !== "" ? `\x1b[${look.ansi}m${text}\x1b[0m` : text);
  const indent = " ".repeat(label + GUTTER);
  const offset = input.utcOffsetMinutes;
  const lines = [
    `${input.pod}: ${clockTime(layout.startAt, offset)} to ${clockTime(layout.now, offset)} (${input.ended}) ${utcOffset(offset)}, ${shortDuration(layout.now - layout.startAt)}`,
  ];
  for (const row of layout.rows) {
    const name = rowLabel(row.container);
    const shown = name.length > label ? `${name.slice(0, label - 1)}…` : name;
    lines.push(`${shown.padEnd(label)}${" ".repeat(GUTTER)}${barLine(row, layout.columns, paint)}`.trimEnd());
    const marks = markLine(row, layout.columns, paint);
    if (marks.trim() !== "") lines.push(`${indent}${marks}`.trimEnd());
  }
  const [axis, labels] = axisLines(layout, offset);
  lines.push(indent + axis, (indent + labels).trimEnd());
  lines.push(...legendLines(legendContents(layout), input.width, paint));
  lines.push(...timelineNotes(layout, offset).flatMap((note) => wrap(note, input.width)));
  return `${lines.join("\n")}\n`;
}

function barLine(row: LaidOutRow, columns: number, paint: (look: Pick<Look, "ansi">, text: string) => string): string {
  let line = "";
  let column = 0;
  for (const segment of row.segments) {
    line += " ".repeat(segment.from - column);
    const width = segment.to - segment.from;
    if (segment.kind === "bar") {
      const look = ENDINGS[segment.attempt.ending];
      line += paint(look, segment.clipped ? `<${look.glyph.repeat(width - 1)}` : look.glyph.repeat(width));
    } else {
      line += paint(WAIT, labelled(WAIT.glyph, width, shortDuration(segment.waitMs)));
    }
    column = segment.to;
  }
  return line + " ".repeat(Math.max(0, columns - column));
}

/** `width` glyphs with `label` in the middle, when it fits with a glyph on each side. */
function labelled(glyph: string, width: number, label: string): string {
  if (label.length + 2 > width) return glyph.repeat(width);
  const left = Math.floor((width - label.length) / 2);
  return glyph.repeat(left) + label + glyph.repeat(width - left - label.length);
}

function markLine(row: LaidOutRow, columns: number, paint: (look: Pick<Look, "ansi">, text: string) => string): string {
  const cells: (keyof typeof MARKS | undefined)[] = new Array(columns).fill(undefined);
  for (const { column, mark } of row.marks) {
    const current = cells[column];
    if (current === undefined || MARK_PRIORITY.indexOf(mark.kind) < MARK_PRIORITY.indexOf(current)) cells[column] = mark.kind;
  }
  return cells.map((kind) => (kind ? paint(MARKS[kind], MARKS[kind].glyph) : " ")).join("");
}

/** The axis (`+` at labelled instants, `~` where time is compressed) and the clock times under it. */
function axisLines(layout: TimelineLayout, offset: number): [string, string] {
  const axis = new Array(layout.columns + 1).fill("-");
  for (const range of layout.compressed) for (let c = range.from; c < range.to; c++) axis[c] = COMPRESSED.glyph;
  const labels = new Array(layout.columns + 1).fill(" ");
  const taken: [number, number][] = [];
  const place = (column: number, text: string, alignRight: boolean) => {
    const from = alignRight ? column - text.length + 1 : column;
    const to = from + text.length;
    if (from < 0 || to > labels.length || taken.some(([a, b]) => from < b + 2 && a < to + 2)) return;
    taken.push([from, to]);
    axis[column] = "+";
    for (let i = 0; i < text.length; i++) labels[from + i] = text[i];
  };
  const [first, ...rest] = layout.ticks;
  const last = rest.pop();
  if (last) place(last.column, clockTime(last.at, offset), true);
  if (first) place(first.column, clockTime(first.at, offset), false);
  // Where compressed time ends is labelled first: it is where the scale starts to hold again.
  const afterCompression = new Set(layout.compressed.map((range) => range.to));
  const boundaries = rest.filter((tick) => !tick.interior).reverse();
  const byPreference = [...boundaries.filter((tick) => afterCompression.has(tick.column)), ...boundaries, ...rest.filter((tick) => tick.interior)];
  for (const tick of byPreference) place(tick.column, clockTime(tick.at, offset), false);
  return [axis.join(""), labels.join("")];
}

function legendLines(contents: LegendContents, width: number, paint: (look: Pick<Look, "ansi">, text: string) => string): string[] {
  const items = [
    ...contents.endings.map((ending) => `${paint(ENDINGS[ending], ENDINGS[ending].glyph)} ${ENDINGS[ending].label}`),
    ...(contents.waits ? [`${paint(WAIT, WAIT.glyph.repeat(2))} ${WAIT.label}`] : []),
    ...contents.marks.map((kind) => `${paint(MARKS[kind], MARKS[kind].glyph)} ${MARKS[kind].label}`),
    ...(contents.compressed ? [`${COMPRESSED.glyph} ${COMPRESSED.label}`] : []),
  ];
  const visible = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "").length;
  const lines: string[] = [];
  let line = "";
  for (const item of items) {
    if (line !== "" && visible(line) + 2 + visible(item) > width) (lines.push(line), (line = ""));
    line += line === "" ? item : `  ${item}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** Breaks a note at spaces so no line passes `width`; continuation lines are indented by two. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const candidate = line === "" ? word : `${line} ${word}`;
    if (candidate.length > width && line.trim() !== "") {
      lines.push(line);
      line = `  ${word}`;
    } else line = candidate;
  }
  lines.push(line);
  return lines;
}
