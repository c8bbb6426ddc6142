/**
 * A port of Go's text/tabwriter (flags 0, padchar ' '), which kubectl's describe and events
 * output go through: a cell is text ended by a tab; consecutive lines that have a cell in the
 * same column form a block whose cells are padded to the block's widest cell plus `padding`.
 * The last cell of a line (after its last tab) is never padded. `flush()` ends all blocks, as
 * kubectl does before the Events table so it is aligned on its own.
 */
export interface TabWriterOptions {
  /** Minimal cell width including padding (kubectl describe: 0; kubectl get/events: 6). */
  minWidth: number;
  /** Added to the widest cell of a column block (describe: 2; get/events: 3). */
  padding: number;
}

export class TabWriter {
  private lines: string[][] = [];
  private partial = "";
  private out = "";

  constructor(private readonly options: TabWriterOptions) {}

  /** Appends text; lines end at "\n", cells at "\t". */
  write(text: string): this {
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop()!;
    for (const line of parts) this.lines.push(line.split("\t"));
    return this;
  }

  /** Formats everything buffered so far; what follows starts new column blocks. */
  flush(): this {
    if (this.partial !== "") {
      this.lines.push(this.partial.split("\t"));
      this.partial = "";
      this.format(0, this.lines.length, [], false);
    } else {
      this.format(0, this.lines.length, [], true);
    }
    this.lines = [];
    return this;
  }

  /** Flushes and returns all output. */
  toString(): string {
    this.flush();
    return this.out;
  }

  private format(line0: number, line1: number, widths: number[], newlineAtEnd: boolean): void {
    const column = widths.length;
    for (let current = line0; current < line1; current++) {
      if (column >= this.lines[current]!.length - 1) continue;
      // This line has a cell in `column`: print what precedes it, then find the block's extent.
      this.writeLines(line0, current, widths, newlineAtEnd);
      line0 = current;
      let width = this.options.minWidth;
      for (; current < line1; current++) {
        const cells = this.lines[current]!;
        if (column >= cells.length - 1) break;
        width = Math.max(width, runeLength(cells[column]!) + this.options.padding);
      }
      this.format(line0, current, [...widths, width], newlineAtEnd);
      line0 = current;
      current--;
    }
    this.writeLines(line0, line1, widths, newlineAtEnd);
  }

  private writeLines(from: number, to: number, widths: number[], newlineAtEnd: boolean): void {
    for (let i = from; i < to; i++) {
      const cells = this.lines[i]!;
      let text = "";
      cells.forEach((cell, j) => {
        text += j < widths.length && j < cells.length - 1 ? cell + " ".repeat(Math.max(0, widths[j]! - runeLength(cell))) : cell;
      });
      const last = i === this.lines.length - 1 && !newlineAtEnd;
      this.out += last ? text : `${text}\n`;
    }
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Characters as Go counts runes: code points, not UTF-16 units. */
export function runeLength(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let length = 0;
  for (const _ of text) length++;
  return length;
}

/** Formats `text` (tab-separated cells, newline-ended lines) in one go. */
export function tabbed(text: string, options: TabWriterOptions): string {
  return new TabWriter(options).write(text).toString();
}
