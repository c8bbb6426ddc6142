/**
 * One watch's response: a chunked `application/json` body of `{"type":…,"object":…}` lines. The
 * lines the client has not taken yet wait here, bounded in bytes; the body pulls them as the
 * connection can take more. A client that falls further behind is dropped, its queue freed at once
 * and its stream ended, as the API server drops a watcher that does not keep up: a stuck client
 * costs at most the bound and never slows the loop or another watch.
 */

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "ERROR" | "BOOKMARK";

const encoder = new TextEncoder();
const NEWLINE = encoder.encode("\n");
/** How much of the initial list one read of the body takes. */
const INITIAL_BATCH_BYTES = 64 * 1024;

function encodeLine(type: WatchEventType, object: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify({ type, object })}\n`);
}

export class WatchStream {
  readonly response: Response;
  private readonly queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private started = false;
  /** The initial ADDED lines, written as the client reads them: the API server's initial events do not count against the bound. */
  private initial: Iterator<[WatchEventType, unknown]> | undefined;
  private ended = false;
  /** Wakes the body's pending pull when a line is queued or the stream ends. */
  private wake: (() => void) | undefined;

  /** `onEnd` runs once, however the stream ends: closed, dropped, or cancelled by the client. */
  constructor(
    private readonly maxQueuedBytes: number,
    private readonly onEnd: () => void,
  ) {
    const body = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          if (!this.started) {
            // Bun sends a response's headers with its first body byte: a watch with nothing to tell yet
            // would leave kubectl waiting for them. A newline (JSON whitespace, which client-go skips) goes first.
            this.started = true;
            return controller.enqueue(NEWLINE);
          }
          // A pull must enqueue something or the body stalls: an exhausted list falls through to the queue.
          if (this.initial && this.pullInitial(controller) > 0) return;
          if (this.queue.length === 0 && !this.ended) await new Promise<void>((resolve) => (this.wake = resolve));
          for (let chunk = this.queue.shift(); chunk; chunk = this.queue.shift()) {
            this.queuedBytes -= chunk.byteLength;
            controller.enqueue(chunk);
            // Lines sent while the initial ones were pending wait behind them.
            if (this.initial) break;
          }
          if (this.ended) controller.close();
        },
        cancel: () => this.end(),
      },
      // Nothing is read ahead: what waits is in `queue`, where it is counted.
      { highWaterMark: 0 },
    );
    this.response = new Response(body, { status: 200, headers: { "Content-Type": "application/json", "Cache-Control": "no-cache, private" } });
  }

  get open(): boolean {
    return !this.ended;
  }

  /** Enqueues the next batch of initial lines; returns its size in bytes. */
  private pullInitial(controller: ReadableStreamDefaultController<Uint8Array>): number {
    let bytes = 0;
    while (this.initial && bytes < INITIAL_BATCH_BYTES) {
      const next = this.initial.next();
      if (next.done) {
        this.initial = undefined;
        break;
      }
      const line = encodeLine(...next.value);
      bytes += line.byteLength;
      controller.enqueue(line);
    }
    return bytes;
  }

  /** Lines the client gets first, built as it reads them (a large initial list is not held twice, nor dropped). */
  sendInitial(lines: Iterable<[WatchEventType, unknown]>): void {
    this.initial = lines[Symbol.iterator]();
    this.wakeBody();
  }

  /** Queues one event line. False once the stream has ended, or when this line overflowed the bound and dropped the client. */
  send(type: WatchEventType, object: unknown): boolean {
    if (this.ended) return false;
    const line = encodeLine(type, object);
    if (this.queuedBytes + line.byteLength > this.maxQueuedBytes) {
      this.drop();
      return false;
    }
    this.queue.push(line);
    this.queuedBytes += line.byteLength;
    this.wakeBody();
    return true;
  }

  /** Ends the body once the client has read what is queued (timeoutSeconds, after an ERROR). */
  close(): void {
    this.end();
    this.wakeBody();
  }

  /** Ends the body now, discarding what is queued: the client fell too far behind, or went away. */
  drop(): void {
    this.initial = undefined;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.close();
  }

  private wakeBody(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }
}
