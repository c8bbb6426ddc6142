import { backoffSchedule } from "../kubelet/backoff.ts";
import { formatTable } from "../printers/table.ts";
import { backoffOptions } from "./options.ts";

export interface BackoffCommandOptions {
  backoffBase?: unknown;
  backoffMax?: unknown;
}

/** Prints the seed's RESTART / WAIT / SINCE FIRST CRASH table for the given base and cap. */
export function backoffCommand(options: BackoffCommandOptions): number {
  const settings = backoffOptions(options);
  const rows = backoffSchedule(settings).map((row) => [
    String(row.restart),
    seconds(row.waitMs),
    seconds(row.sinceFirstCrashMs),
  ]);
  process.stdout.write(formatTable(["RESTART", "WAIT", "SINCE FIRST CRASH"], rows));
  return 0;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}
