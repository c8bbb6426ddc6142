/** Linux signal names by number, for exit codes above 128 (128 + n is "killed by signal n"). */
import { constants } from "node:os";

const NAMES = new Map<number, string>();
for (const [name, number] of Object.entries(constants.signals)) if (!NAMES.has(number)) NAMES.set(number, name);

/** `SIGKILL` for 9; undefined for a number with no name here. */
export function signalName(signal: number): string | undefined {
  return NAMES.get(signal);
}
