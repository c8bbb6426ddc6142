/**
 * The API server's bounds on the requests it serves at once, applied after the token is checked:
 * `--max-requests-inflight` reads and `--max-mutating-requests-inflight` writes that are not
 * long-running (its maxinflight filter), `--request-timeout` for those same requests (its timeout
 * filter: a 504 Timeout Status), and a cap of our own on the streams (watches, followed logs) each
 * client address holds. Long-running is the API server's BasicLongRunningRequestCheck: a watch, or
 * the attach, exec, log, portforward and proxy subresources.
 */
import type { Clock } from "../../clock.ts";
import type { ApiLimits } from "./context.ts";
import { queryFlag } from "./query-flags.ts";
import { ApiError, statusResponse } from "./status.ts";

const LONG_RUNNING_SUBRESOURCES = new Set(["attach", "exec", "log", "portforward", "proxy"]);
const MUTATING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** What the maxinflight filter tells a refused client. */
const RETRY_AFTER_SECONDS = 1;

/** By the route's pattern, not the path: a pod named `log` is no log request. */
export function isLongRunning(routePath: string, url: URL): boolean {
  return isWatch(url) || routePath.split("/").some((segment) => LONG_RUNNING_SUBRESOURCES.has(segment));
}

function isWatch(url: URL): boolean {
  return queryFlag(url.searchParams, "watch") === true || url.pathname.startsWith("/api/v1/watch/");
}

/** The requests a client keeps open for as long as it likes: what the per-client cap counts. */
export function isStream(routePath: string, url: URL): boolean {
  return isWatch(url) || (routePath.endsWith("/log") && queryFlag(url.searchParams, "follow") === true);
}

/** The maxinflight filter's answer, as a Status (kubectl prints its message either way). */
function tooManyRequests(): ApiError {
  return new ApiError(429, "TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds: RETRY_AFTER_SECONDS });
}

/** Counts for one server: what is in flight, and each client's open streams. */
export class RequestLimits {
  private reads = 0;
  private writes = 0;
  private readonly streams = new Map<string, number>();

  constructor(private readonly limits: Pick<ApiLimits, "maxRequestsInflight" | "maxMutatingRequestsInflight" | "maxStreamsPerClient" | "requestTimeoutMs">, private readonly clock: Clock) {}

  /**
   * Takes the slot `request` needs: returns its (idempotent) release, or the 429 to answer. A
   * stream's release belongs with its body (`holdUntilDone`); any other with its handler's end.
   */
  admit(method: string, routePath: string, url: URL, client: string): (() => void) | Response {
    if (isStream(routePath, url)) {
      const open = this.streams.get(client) ?? 0;
      if (open >= this.limits.maxStreamsPerClient) {
        return statusResponse(new ApiError(429, "TooManyRequests", `too many open streams (watches, followed logs) from ${client || "this client"} (at most ${this.limits.maxStreamsPerClient}), please try again later`, { retryAfterSeconds: RETRY_AFTER_SECONDS }));
      }
      this.streams.set(client, open + 1);
      return once(() => {
        const left = (this.streams.get(client) ?? 1) - 1;
        if (left > 0) this.streams.set(client, left);
        else this.streams.delete(client);
      });
    }
    if (isLongRunning(routePath, url)) return () => {};
    const mutating = MUTATING_METHODS.has(method);
    if (mutating ? this.writes >= this.limits.maxMutatingRequestsInflight : this.reads >= this.limits.maxRequestsInflight) return statusResponse(tooManyRequests());
    if (mutating) this.writes++;
    else this.reads++;
    return once(() => (mutating ? this.writes-- : this.reads--));
  }

  /** Requests in flight now (reads, writes): for the tests. */
  inflight(): { reads: number; writes: number } {
    return { reads: this.reads, writes: this.writes };
  }

  /**
   * `handle`'s answer, or the 504 Timeout Status once `--request-timeout` passes first; then
   * `abort` tells the handler to stop. Long-running requests are not timed.
   */
  async timed(handle: () => Promise<Response | undefined>, abort: AbortController): Promise<Response | undefined> {
    let cancel = () => {};
    const timedOut = new Promise<Response>((resolve) => {
      cancel = this.clock.setTimeout(() => {
        abort.abort(new Error("the request timed out"));
        // The API server's timeout filter: NewTimeoutError("request did not complete within requested timeout - context deadline exceeded").
        resolve(statusResponse(new ApiError(504, "Timeout", "Timeout: request did not complete within requested timeout - context deadline exceeded", {})));
      }, this.limits.requestTimeoutMs);
    });
    try {
      return await Promise.race([handle(), timedOut]);
    } finally {
      cancel();
    }
  }
}

/** The response with `release` called once its body is done, cancelled or fails (at once when it has none). */
export function holdUntilDone(response: Response, release: () => void, signal: AbortSignal): Response {
  if (!response.body) {
    release();
    return response;
  }
  signal.addEventListener("abort", release, { once: true });
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
