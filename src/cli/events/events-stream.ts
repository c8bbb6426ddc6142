/**
 * `events` written as its rows are read, for databases with more events than fit in memory: the
 * table and `-o json|yaml` in the same bytes as events-format.ts gives for the whole list, handed to
 * the sink in pieces, each awaited (a slow reader holds the reading back).
 *
 * The table's columns are as wide as their widest cell, which a stream cannot know before its last
 * row. kubectl does not stream here either (`kubectl events` reads every page, then sorts and
 * prints). So a list that ends within its first page (kubectl's 500) is laid out exactly as a whole;
 * a longer one gets column widths fixed before its first row from that page and the store's bounds
 * of every cell (EventCellBounds, from index seeks), so its rows stay aligned, a few spaces wider
 * than the exact layout where a bound is loose.
 */
import { humanDurationWidth } from "../../printers/age.ts";
import { listPieces } from "../../printers/serialize.ts";
import type { EventCellBounds } from "../../store/event-reads.ts";
import type { EventRow } from "../../store/queries.ts";
import { EVENT_HEADER, eventCells, eventListEnvelope, eventObject, formatEventList, formatEventRows } from "./events-format.ts";
import { runeLength } from "../tabwriter.ts";

/** Takes the next piece of output; a promise holds the writer back until the reader has room. */
export type TextSink = (text: string) => unknown;

/** Rows a list may have and still be laid out exactly, as one page. */
export const FIRST_PAGE_ROWS = 500;

/** Output is handed over in pieces of about this many characters. */
const PIECE_CHARS = 64 * 1024;

/** Output between two collections (see Pieces.flush). */
const COLLECT_EVERY_CHARS = 256 * 1024;

/** kubectl get's tabwriter: minwidth 6, padding 3 (as formatEventRows). */
const MIN_WIDTH = 6;
const PADDING = 3;

/** Writes the table of `rows`; returns how many rows it wrote (0: nothing was written). */
export async function writeEventTable(rows: Iterator<EventRow>, now: number, bounds: () => EventCellBounds, sink: TextSink): Promise<number> {
  const page: EventRow[] = [];
  let next = rows.next();
  for (; !next.done && page.length < FIRST_PAGE_ROWS; next = rows.next()) page.push(next.value);
  if (next.done) {
    if (page.length > 0) await sink(formatEventRows(page, now));
    return page.length;
  }
  const widths = columnWidths(page, now, bounds());
  const out = new Pieces(sink);
  await out.add(fixedRow(EVENT_HEADER, widths));
  for (const event of page) await out.add(fixedRow(eventCells(event, now), widths));
  let written = page.length;
  for (; !next.done; next = rows.next(), written++) await out.add(fixedRow(eventCells(next.value, now), widths));
  await out.flush();
  return written;
}

/** Writes `rows` as a v1 List of Events in `format`. */
export async function writeEventList(rows: Iterator<EventRow>, format: "json" | "yaml", sink: TextSink): Promise<void> {
  let next = rows.next();
  if (next.done) return void (await sink(formatEventList([], format)));
  const pieces = listPieces(eventListEnvelope(), format);
  const out = new Pieces(sink);
  await out.add(pieces.head);
  for (let first = true; !next.done; next = rows.next(), first = false) await out.add(pieces.item(eventObject(next.value), first));
  await out.add(pieces.tail);
  await out.flush();
}

/** Each padded column's width: its widest cell in the page or anywhere by the bounds, plus padding. */
function columnWidths(page: EventRow[], now: number, bounds: EventCellBounds): number[] {
  const widest = [lastSeenWidth(bounds, now), bounds.typeLength, bounds.reasonLength, "pod/".length + bounds.podLength];
  for (const cells of [EVENT_HEADER, ...page.map((event) => eventCells(event, now))]) {
    for (let i = 0; i < widest.length; i++) widest[i] = Math.max(widest[i]!, runeLength(cells[i]!));
  }
  return widest.map((width) => Math.max(MIN_WIDTH, width + PADDING));
}

/**
 * The widest LAST SEEN (eventAge) any event can have: `AGE (xCOUNT over AGE)`. The last occurrence's
 * age is bounded by the oldest one; the first occurrence has no index, so its age by any span.
 */
function lastSeenWidth(bounds: EventCellBounds, now: number): number {
  if (bounds.oldestLastAt === undefined) return 0;
  // An event more than 2s in the future is "<invalid>" (clock skew between writer and reader).
  const invalid = (bounds.newestLastAt ?? 0) - now >= 2000 ? "<invalid>".length : 0;
  const first = Math.max(invalid, humanDurationWidth(now));
  if (bounds.maxCount <= 1) return first;
  const last = Math.max(invalid, humanDurationWidth(now - bounds.oldestLastAt));
  return Math.max(first, `${"".padEnd(last)} (x${bounds.maxCount} over ${"".padEnd(first)})`.length);
}

function fixedRow(cells: readonly string[], widths: number[]): string {
  let line = "";
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    line += i < widths.length && i < cells.length - 1 ? cell + padding(widths[i]! - runeLength(cell)) : cell;
  }
  return `${line}\n`;
}

const SPACES = " ".repeat(256);

function padding(width: number): string {
  return width <= 0 ? "" : width <= SPACES.length ? SPACES.slice(0, width) : " ".repeat(width);
}

/** Gathers output into pieces of about PIECE_CHARS, so a million rows are not a million writes. */
class Pieces {
  private buffered = "";
  private sinceCollect = 0;

  constructor(private readonly sink: TextSink) {}

  async add(text: string): Promise<void> {
    this.buffered += text;
    if (this.buffered.length >= PIECE_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.buffered === "") return;
    const text = this.buffered;
    this.buffered = "";
    await this.sink(text);
    this.sinceCollect += text.length;
    // Every row read and written is garbage at once, yet JSC lets its heap grow by some 80 MB before
    // collecting (bare iteration of the rows peaks at ~120 MB): a collection every few thousand
    // rows, while the heap is small and cheap to walk, keeps the process under 100 MB.
    if (this.sinceCollect >= COLLECT_EVERY_CHARS) {
      this.sinceCollect = 0;
      Bun.gc(true);
    }
  }
}
