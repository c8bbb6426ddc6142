/**
 * `get pods` output: the default table, `-o wide` and `-o name` (`-o json|yaml` is the command's
 * serializeObject of the List: the yaml library is loaded only by the runs that print it).
 * Rows keep the order they are given in (kubectl keeps the server's order, and a file's order).
 */
import { printPodRow, type PodRow } from "./pod-printer.ts";
import { formatTable } from "./table.ts";
import type { V1Pod } from "../v1/v1.ts";

export const POD_OUTPUTS = ["wide", "name", "json", "yaml"] as const;
/** `undefined` is the default table. */
export type PodOutput = (typeof POD_OUTPUTS)[number] | undefined;

/** The outputs formatPods renders. */
export type PodTextOutput = Exclude<PodOutput, "json" | "yaml">;

export interface FormatPodsOptions {
  output?: PodTextOutput;
  /** `-A`: a NAMESPACE column first (ignored by `-o name`, as in kubectl). */
  allNamespaces?: boolean;
  /** Epoch ms for AGE and `(12s ago)`; the caller reads its clock once. */
  now: number;
}

const HEADERS = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"];
const WIDE_HEADERS = ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"];

/**
 * Renders `pods` for `get pods`. Table outputs return "" for no pods, so the caller can print
 * kubectl's `No resources found` to stderr instead.
 */
export function formatPods(pods: V1Pod[], options: FormatPodsOptions): string {
  const { output, allNamespaces = false, now } = options;
  switch (output) {
    case "name":
      return pods.map((pod) => `pod/${pod.metadata.name}\n`).join("");
    case "wide":
    case undefined: {
      if (pods.length === 0) return "";
      const wide = output === "wide";
      const headers = [...(allNamespaces ? ["NAMESPACE"] : []), ...HEADERS, ...(wide ? WIDE_HEADERS : [])];
      const rows = pods.map((pod) => podCells(printPodRow(pod, now), { wide, allNamespaces }));
      return formatTable(headers, rows);
    }
    default:
      return assertNever(output);
  }
}

/** The cells of one row, in the column order `formatPods` prints. */
export function podCells(row: PodRow, options: { wide: boolean; allNamespaces: boolean }): string[] {
  return [
    ...(options.allNamespaces ? [row.namespace] : []),
    row.name,
    row.ready,
    row.status,
    row.restarts,
    row.age,
    ...(options.wide ? [row.ip, row.node, row.nominatedNode, row.readinessGates] : []),
  ];
}

function assertNever(value: never): never {
  throw new Error(`unhandled output format ${JSON.stringify(value)}`);
}
