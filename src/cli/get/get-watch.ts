/**
 * `get pods -w` output, like kubectl's: the list first, then one row per change. kubectl prints
 * through a tabwriter with RememberWidths, so a later row keeps the columns as wide as anything
 * printed before (and widens them when a cell is longer); no header is repeated. `-o name` prints
 * `pod/NAME` per change, `-o json|yaml` each changed object (yaml documents separated by `---`).
 */
import { printPodRow } from "../../printers/pod-printer.ts";
import { podCells, type PodOutput } from "../../printers/pod-table.ts";
import { serializeObject } from "../../printers/serialize.ts";
import { withTypeMeta, type V1Pod } from "../../v1/v1.ts";

const HEADERS = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"];
const WIDE_HEADERS = ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"];
/** kubectl's get tabwriter: cells padded to the widest plus 3, at least 6 wide. */
const PADDING = 3;
const MIN_WIDTH = 6;

export interface PodWatchPrinterOptions {
  output: PodOutput;
  allNamespaces: boolean;
}

export class PodWatchPrinter {
  /** Column widths seen so far (cell text, without padding); undefined until the header is out. */
  private widths: number[] | undefined;
  private documents = 0;
  private readonly wide: boolean;
  private readonly headers: string[];

  constructor(private readonly options: PodWatchPrinterOptions) {
    this.wide = options.output === "wide";
    this.headers = [...(options.allNamespaces ? ["NAMESPACE"] : []), ...HEADERS, ...(this.wide ? WIDE_HEADERS : [])];
  }

  /** The initial list: the header and a row per pod ("" for no pods: the header comes with the first row). */
  list(pods: V1Pod[], now: number): string {
    if (!this.isTable()) return pods.map((pod) => this.row(pod, now)).join("");
    if (pods.length === 0) return "";
    const rows = pods.map((pod) => this.cells(pod, now));
    return this.lines([this.headers, ...rows]);
  }

  /** One pod that changed (a deleted one is printed with its last state, as kubectl does). */
  row(pod: V1Pod, now: number): string {
    switch (this.options.output) {
      case "name":
        return `pod/${pod.metadata.name}\n`;
      case "json":
        return serializeObject(withTypeMeta(pod), "json");
      case "yaml":
        return `${this.documents++ > 0 ? "---\n" : ""}${serializeObject(withTypeMeta(pod), "yaml")}`;
      default:
        return this.lines(this.widths ? [this.cells(pod, now)] : [this.headers, this.cells(pod, now)]);
    }
  }

  private isTable(): boolean {
    return this.options.output === undefined || this.options.output === "wide";
  }

  private cells(pod: V1Pod, now: number): string[] {
    return podCells(printPodRow(pod, now), { wide: this.wide, allNamespaces: this.options.allNamespaces });
  }

  private lines(rows: string[][]): string {
    const widths = (this.widths ??= this.headers.map(() => 0));
    for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
    return rows
      .map((row) => {
        const text = row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(Math.max(widths[i]! + PADDING, MIN_WIDTH)))).join("");
        return `${text.trimEnd()}\n`;
      })
      .join("");
  }
}
