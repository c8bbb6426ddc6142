/**
 * A watch stream a test feeds by hand: `stream(signal)` is what a fake ClusterApi's `watch` returns,
 * `send` hands it one event (or "end", the server closing it), and an abort ends it.
 */
import type { WatchEvent } from "../src/node/cluster-client.ts";

export class WatchFeed<O> {
  private push?: (event: WatchEvent<O> | "end") => void;

  async *stream<T>(signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    const queue: (WatchEvent<O> | "end")[] = [];
    let wake: (() => void) | undefined;
    this.push = (event) => {
      queue.push(event);
      wake?.();
    };
    signal.addEventListener("abort", () => this.push!("end"));
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const next = queue.shift()!;
      if (next === "end") return;
      yield next as unknown as WatchEvent<T>;
    }
  }

  /** One event on the open watch (the test opened one first). */
  send(event: WatchEvent<O> | "end"): void {
    this.push!(event);
  }
}
