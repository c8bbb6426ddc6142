/** Shared parsing of numeric flags, so every command names the flag and the value it refused. */
import { UsageError } from "./cli.ts";

export function secondsOption(flag: string, value: unknown): number {
  const seconds = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`${flag} must be a number of seconds above 0 (got ${JSON.stringify(value)})`);
  }
  return seconds;
}
