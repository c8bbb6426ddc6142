import { backoffSchedule, backoffSettings } from "../kubelet/backoff.ts";
import { formatTable } from "../status/table.ts";
import { secondsOption } from "./options.ts";

export interface BackoffCommandOptions {
  backoffBase?: unknown;
  backoffMax?: unknown;
}

/** Prints the seed's RESTART / WAIT / SINCE FIRST CRASH table for the given base and cap. */
export function backoffCommand(options: BackoffCommandOptions): number {
  const settings = backoffSettings({
    baseSeconds: secondsOption("--backoff-base", options.backoffBase ?? 10),
    capSeconds: secondsOption("--backoff-max", options.backoffMax ?? 300),
  });
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
