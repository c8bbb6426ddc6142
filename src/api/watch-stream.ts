/**
 * One watch's response: a chunked `application/json` body of `{"type":…,"object":…}` lines. What
 * the client has not read yet stays queued in the stream, bounded in bytes: a client that falls
 * further behind is dropped (the queue freed at once), as the API server drops a watcher that does
 * not keep up, so a stuck client costs at most the bound and never slows the loop or another watch.
 */

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "ERROR" | "BOOKMARK";

const encoder = new TextEncoder();

export class WatchStream {
  readonly response: Response;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private ended = false;

  /** `onEnd` runs once, however the stream ends: closed, dropped, or cancelled by the client. */
  constructor(
    maxQueuedBytes: number,
    private readonly onEnd: () => void,
  ) {
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        cancel: () => this.end(),
      },
      { highWaterMark: maxQueuedBytes, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    this.response = new Response(body, { status: 200, headers: { "Content-Type": "application/json", "Cache-Control": "no-cache, private" } });
  }

  get open(): boolean {
    return !this.ended;
  }

  /** Queues one event line. False once the stream has ended, or when this line overflowed the bound and dropped it. */
  send(type: WatchEventType, object: unknown): boolean {
    if (this.ended) return false;
    this.controller.enqueue(encoder.encode(`${JSON.stringify({ type, object })}\n`));
    if ((this.controller.desiredSize ?? 0) < 0) {
      this.drop();
      return false;
    }
    return true;
  }

  /** Ends the body cleanly once the client has read what is queued (timeoutSeconds, an ERROR sent). */
  close(): void {
    if (this.ended) return;
    this.end();
    this.controller.close();
  }

  /** Ends the connection now, discarding what is queued: the client fell too far behind. */
  drop(): void {
    if (this.ended) return;
    this.end();
    this.controller.error(new Error("watch dropped: the client fell too far behind"));
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }
}
