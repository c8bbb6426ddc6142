/**
 * One list-then-watch of a collection of the cluster, kept going for as long as it is wanted, as
 * client-go's reflector does for the kubelet's caches: list (its resourceVersion), watch from there,
 * watch again when the server ends the stream, list again when the version is gone (410), and after
 * a failure wait (capped doubling) before trying again. It never throws: each listing and each
 * event is handed to the owner, and so is each failure (the owner decides what it means).
 */
import type { Clock } from "../clock.ts";
import { sleep } from "../clock.ts";
import { cappedDoubling } from "../capped-doubling.ts";
import { ClusterApiError, type ClusterApi, type WatchEvent } from "./cluster-client.ts";

const RETRY_BASE_MS = 1000;
const RETRY_CAP_MS = 30_000;
/** The server ends a watch after this (client-go picks 5 to 10 minutes): a fresh stream is cheap. */
const WATCH_TIMEOUT_SECONDS = 300;

export interface WatchHandlers<T> {
  listed(items: T[]): void;
  event(event: WatchEvent<T>): void;
  /** `verb`: what failed, the listing or the watch. */
  failed(error: ClusterApiError, verb: "list" | "watch"): void;
}

export interface ObjectWatchOptions<T> {
  client: ClusterApi;
  clock: Clock;
  /** The collection, e.g. `/api/v1/namespaces/NS/configmaps`. */
  path: string;
  /** e.g. `fieldSelector: metadata.name=NAME`: what the Node authorizer lets a node list. */
  query?: Record<string, string>;
  handlers: WatchHandlers<T>;
}

/** Runs until the returned function is called. */
export function runObjectWatch<T extends { metadata?: { resourceVersion?: string } }>(options: ObjectWatchOptions<T>): () => void {
  const abort = new AbortController();
  const { client, clock, path, handlers } = options;
  const query = options.query ?? {};
  void (async () => {
    let failures = 0;
    let resourceVersion: string | undefined;
    let verb: "list" | "watch" = "list";
    while (!abort.signal.aborted) {
      try {
        verb = "list";
        if (resourceVersion === undefined) {
          const list = await client.request<{ metadata?: { resourceVersion?: string }; items?: T[] }>({ method: "GET", path, query, signal: abort.signal });
          resourceVersion = list.metadata?.resourceVersion ?? "";
          handlers.listed(list.items ?? []);
        }
        verb = "watch";
        const stream = client.watch<T>(path, { ...query, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS }, abort.signal);
        for await (const event of stream) {
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type !== "BOOKMARK") handlers.event(event);
          failures = 0;
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        const failure = error instanceof ClusterApiError ? error : new ClusterApiError(0, "ServiceUnavailable", String(error), { method: "GET", path });
        if (failure.expired) {
          resourceVersion = undefined;
          continue;
        }
        handlers.failed(failure, verb);
        resourceVersion = undefined;
        await sleep(clock, cappedDoubling(RETRY_BASE_MS, RETRY_CAP_MS, failures++), abort.signal).catch(() => {});
      }
    }
  })();
  return () => abort.abort();
}
