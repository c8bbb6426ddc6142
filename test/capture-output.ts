import { spyOn } from "bun:test";

/**
 * Captures what commands print, whichever way they print it: process.stdout and process.stderr, or
 * src/cli/stdio.ts's console.write and console.error (which ends each line itself, so a newline is
 * put back). `restore()` puts the writers back.
 */
export function captureOutput(onStdout: (text: string) => void, onStderr: (text: string) => void = onStdout): { restore(): void } {
  const spies = [
    spyOn(process.stdout, "write").mockImplementation(((chunk: unknown) => (onStdout(String(chunk)), true)) as never),
    spyOn(process.stderr, "write").mockImplementation(((chunk: unknown) => (onStderr(String(chunk)), true)) as never),
    spyOn(console, "write").mockImplementation(((...chunks: unknown[]) => (onStdout(chunks.map(String).join("")), 0)) as never),
    spyOn(console, "error").mockImplementation(((...parts: unknown[]) => onStderr(`${parts.map(String).join(" ")}\n`)) as never),
  ];
  return { restore: () => spies.forEach((spy) => spy.mockRestore()) };
}
