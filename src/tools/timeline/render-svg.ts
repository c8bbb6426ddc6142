/**
 * The timeline as a standalone SVG for a bug report: the same layout as the text, each attempt a
 * <rect> whose <title> spells it out (container, attempt, start, end, exit code, reason), waits
 * with their length, marks, the axis and the legend. No script, no external reference.
 */
import { layoutTimeline, type Segment } from "./layout.ts";
import { ENDINGS, MARKS, WAIT, clockTime, legendContents, shortDuration, utcOffset } from "./legend.ts";
import type { TimelineContainer } from "./model.ts";
import { attemptSummary, timelineNotes } from "./notes.ts";
import { plotColumns, rowLabel } from "./frame.ts";

export interface TimelineSvgInput {
  pod: string;
  containers: TimelineContainer[];
  now: number;
  ended: "now" | "deleted";
  /** In text columns: the SVG draws the layout the text would have at this width. */
  width: number;
  utcOffsetMinutes: number;
}

const COLUMN_PX = 8;
const CHAR_PX = 7.5;
const ROW_PX = 30;
const BAR_PX = 14;
const LINE_PX = 16;
const MARGIN = 12;

export function timelineSvg(input: TimelineSvgInput): string {
  const { label, plot } = plotColumns(input.containers, input.width);
  const layout = layoutTimeline(input.containers, input.now, plot);
  const offset = input.utcOffsetMinutes;
  const plotX = MARGIN + label * CHAR_PX + 12;
  const x = (column: number) => plotX + column * COLUMN_PX;
  const top = MARGIN + 2 * LINE_PX;
  const parts: string[] = [];
  const title = `${input.pod}: ${clockTime(layout.startAt, offset)} to ${clockTime(layout.now, offset)} (${input.ended}) ${utcOffset(offset)}, ${shortDuration(layout.now - layout.startAt)}`;
  parts.push(`<title>${escape(`Restart timeline of ${title}`)}</title>`);
  parts.push(`<text x="${MARGIN}" y="${MARGIN + LINE_PX - 4}" font-weight="bold">${escape(title)}</text>`);

  layout.rows.forEach((row, index) => {
    const rowTop = top + index * ROW_PX;
    const barY = rowTop + (ROW_PX - BAR_PX) / 2;
    parts.push(`<text class="row-label" x="${MARGIN}" y="${barY + BAR_PX - 3}">${escape(rowLabel(row.container))}</text>`);
    for (const segment of row.segments) parts.push(segmentSvg(segment, row.container.name, barY, x, input.now, offset));
    for (const { column, mark } of row.marks) {
      const cx = x(column) + COLUMN_PX / 2;
      const repeat = mark.count > 1 ? ` (x${mark.count} from ${clockTime(mark.firstAt, offset)} to ${clockTime(mark.lastAt, offset)})` : "";
      const tip = `${row.container.name} ${clockTime(mark.at, offset)}: ${mark.message}${repeat}`;
      parts.push(
        `<path class="mark mark-${mark.kind}" d="M ${cx} ${barY - 1} l -4 -6 h 8 z" fill="${MARKS[mark.kind].fill}"><title>${escape(tip)}</title></path>`,
      );
    }
  });

  const axisY = top + layout.rows.length * ROW_PX + 6;
  parts.push(`<line class="axis" x1="${x(0)}" y1="${axisY}" x2="${x(layout.columns)}" y2="${axisY}" stroke="#333"/>`);
  for (const range of layout.compressed) {
    // The compressed stretch of the axis is a zigzag instead of a straight line.
    const from = x(range.from);
    const to = x(range.to);
    let zigzag = `M ${from} ${axisY}`;
    for (let step = from + 3, up = true; step <= to; step += 3, up = !up) zigzag += ` L ${step} ${axisY + (up ? -3 : 3)}`;
    parts.push(
      `<rect x="${from}" y="${axisY - 1}" width="${to - from}" height="2" fill="#ffffff"/><path class="compressed" d="${zigzag}" fill="none" stroke="#333"><title>${escape(`${shortDuration(range.toAt - range.fromAt)} compressed`)}</title></path>`,
    );
  }
  let lastLabelEnd = -Infinity;
  const ticks = [...layout.ticks];
  const now = ticks.pop();
  const nowText = now ? clockTime(now.at, offset) : "";
  const nowStart = now ? x(now.column) - nowText.length * CHAR_PX : Infinity;
  for (const tick of ticks) {
    const text = clockTime(tick.at, offset);
    const from = x(tick.column);
    if (from < lastLabelEnd + 8 || from + text.length * CHAR_PX > nowStart - 8) continue;
    parts.push(tickSvg(from, axisY, text, "start"));
    lastLabelEnd = from + text.length * CHAR_PX;
  }
  if (now) parts.push(tickSvg(x(now.column), axisY, nowText, "end"));

  let y = axisY + 2 * LINE_PX + 4;
  const contents = legendContents(layout);
  const legend = [
    ...contents.endings.map((ending) => ({ fill: ENDINGS[ending].fill, label: ENDINGS[ending].label })),
    ...(contents.waits ? [{ fill: WAIT.fill, label: WAIT.label }] : []),
    ...contents.marks.map((kind) => ({ fill: MARKS[kind].fill, label: `▼ ${MARKS[kind].label}` })),
  ];
  let legendX = MARGIN;
  const right = Math.max(x(layout.columns) + MARGIN, 600);
  for (const item of legend) {
    const itemWidth = 16 + item.label.length * CHAR_PX + 14;
    if (legendX + itemWidth > right && legendX > MARGIN) ((legendX = MARGIN), (y += LINE_PX + 2));
    parts.push(`<rect class="legend" x="${legendX}" y="${y - 10}" width="12" height="12" fill="${item.fill}"/><text x="${legendX + 16}" y="${y}">${escape(item.label)}</text>`);
    legendX += itemWidth;
  }
  for (const note of timelineNotes(layout, offset)) {
    y += LINE_PX + 2;
    parts.push(`<text class="note" x="${MARGIN}" y="${y}">${escape(note)}</text>`);
  }
  const height = y + MARGIN;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${right}" height="${height}" viewBox="0 0 ${right} ${height}" font-family="monospace" font-size="12">`,
    `<rect class="background" x="0" y="0" width="${right}" height="${height}" fill="#ffffff"/>`,
    ...parts,
    `</svg>`,
    "",
  ].join("\n");
}

function segmentSvg(segment: Segment, container: string, barY: number, x: (column: number) => number, now: number, offset: number): string {
  const from = x(segment.from);
  const width = (segment.to - segment.from) * COLUMN_PX;
  if (segment.kind === "bar") {
    const look = ENDINGS[segment.attempt.ending];
    const tip = attemptSummary(container, segment.attempt, now, offset) + (segment.clipped ? " (started before the picture)" : "");
    return `<rect class="bar ending-${segment.attempt.ending}" x="${from + 1}" y="${barY}" width="${Math.max(2, width - 2)}" height="${BAR_PX}" fill="${look.fill}"><title>${escape(tip)}</title></rect>`;
  }
  const mid = barY + BAR_PX / 2;
  const label = shortDuration(segment.waitMs);
  const text = label.length * CHAR_PX + 4 <= width ? `<text x="${from + width / 2}" y="${mid - 3}" text-anchor="middle" font-size="10" fill="#555">${label}</text>` : "";
  const tip = `${container} ${segment.ongoing ? "waiting to restart for" : "back-off wait of"} ${label}`;
  return `<g class="wait"><title>${escape(tip)}</title><line x1="${from}" y1="${mid}" x2="${from + width}" y2="${mid}" stroke="${WAIT.fill}" stroke-dasharray="2 3"/>${text}</g>`;
}

function tickSvg(x: number, axisY: number, text: string, anchor: "start" | "end"): string {
  return `<line class="tick" x1="${x}" y1="${axisY - 4}" x2="${x}" y2="${axisY + 4}" stroke="#333"/><text x="${x}" y="${axisY + LINE_PX}" text-anchor="${anchor}">${escape(text)}</text>`;
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
