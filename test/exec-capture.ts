/** Collects an interactive exec's output for tests, and waits (in real time, bounded) for text in it. */
import type { ExecStreamRequest } from "../src/runtime/runtime.ts";
import { within } from "./runtime-contract.ts";

export class ExecCapture {
  stdout = "";
  stderr = "";
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  private readonly waiters = new Set<() => void>();

  readonly output: ExecStreamRequest["output"] = (stream, data) => {
    this[stream] += this.decoders[stream].decode(data, { stream: true });
    for (const wake of [...this.waiters]) wake();
  };

  waitFor(stream: "stdout" | "stderr", text: string, ms = 5000): Promise<void> {
    return within(
      ms,
      `${stream} containing ${JSON.stringify(text)} (have ${JSON.stringify(this[stream])})`,
      new Promise<void>((resolve) => {
        const check = () => {
          if (!this[stream].includes(text)) return;
          this.waiters.delete(check);
          resolve();
        };
        this.waiters.add(check);
        check();
      }),
    );
  }
}
