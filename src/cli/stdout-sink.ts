/**
 * Standard output as a TextSink for commands that write more than fits in memory: a write the pipe
 * cannot take yet resolves on `drain`, so the command reads no further ahead than the reader.
 * A reader that went away (`| head`) ends the output quietly, as `head` expects of a writer.
 */
import type { TextSink } from "./events/events-stream.ts";

export function stdoutSink(stream: NodeJS.WriteStream = process.stdout): TextSink {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(0);
  });
  return (text) => {
    if (stream.write(text)) return;
    return new Promise<void>((resolve) => stream.once("drain", resolve));
  };
}
