/**
 * `describe` of a manifest file the agent refused (STATUS Invalid in `get pods`): the pod's identity
 * as far as the file gave it, the file, every problem with its field path, and the file's events.
 * Laid out like describePodText, through the same tabwriter settings.
 */
import { formatIssue } from "../../manifest/errors.ts";
import { parseTimestamp } from "../../printers/age.ts";
import type { EventRow, RefusedPodRow } from "../../store/queries.ts";
import { eventAge, rfc1123z } from "./describe-pod.ts";
import { TabWriter } from "../tabwriter.ts";

export interface DescribeRefusedInput {
  row: RefusedPodRow;
  events: EventRow[];
  now: number;
  utcOffsetMinutes?: number;
}

export function describeRefusedText(input: DescribeRefusedInput): string {
  const { row, now } = input;
  const status = row.object.status ?? {};
  const w = new TabWriter({ minWidth: 0, padding: 2 });
  w.write(`Name:\t${row.name}\n`);
  w.write(`Namespace:\t${row.namespace}\n`);
  w.write("Node:\t<none>\n");
  w.write(`Manifest:\t${row.file}\n`);
  w.write(`First Seen:\t${rfc1123z(parseTimestamp(row.object.metadata.creationTimestamp) ?? now, input.utcOffsetMinutes)}\n`);
  w.write(`Status:\t${status.phase ?? "Pending"}\n`);
  w.write(`Reason:\t${status.reason ?? ""}\n`);
  w.write(`Message:\t${row.reason === "FailedToParse" ? "the file could not be parsed" : "the file is not a valid Pod"}; not run until it is fixed\n`);
  w.write(`Problems:\n`);
  for (const issue of row.issues) w.write(`  ${formatIssue(issue)}\n`);
  w.flush();
  if (input.events.length === 0) w.write("Events:\t<none>\n");
  else {
    w.write("Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    w.write("  ----\t------\t----\t----\t-------\n");
    for (const e of input.events) w.write(`  ${e.type}\t${e.reason}\t${eventAge(e, now)}\tkubelet\t${e.message.trim()}\n`);
  }
  return w.toString();
}
