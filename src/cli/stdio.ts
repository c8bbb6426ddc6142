/**
 * Where commands print. Not process.stdout and process.stderr: in the compiled binary their first
 * use loads Bun's node:stream, about 10 ms, as long as all the rest of a `--version`. console.write
 * (stdout) and console.error (stderr) reach the same descriptors, in order, and wait when a pipe is
 * full.
 */
export function writeStdout(text: string): void {
  console.write(text);
}

export function writeStderr(text: string): void {
  // console.error ends what it prints with a newline; a partial line (none today) takes the stream.
  if (text === "") return;
  if (text.endsWith("\n")) console.error(text.slice(0, -1));
  else process.stderr.write(text);
}

/** Where a command that prints both streams writes; tests pass their own. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: CommandOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};
