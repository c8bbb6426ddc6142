/**
 * `?watch=true` on the pods and events collections, as the API server serves it: ADDED for the
 * current objects when the watch starts at resourceVersion 0 (or none), then every change after
 * it as ADDED, MODIFIED or DELETED, each object a one-row Table when the client asks `as=Table`.
 * A watch from a resourceVersion that retention has compacted away gets one ERROR event carrying
 * the 410 Expired Status, inside a 200 stream: the API server answers so once the version parsed.
 *
 * The watch is the same path as the list: each collection's route hands a request without `watch`
 * to its list (watchOrList). routes.ts puts the collections before the object routes, since the
 * server takes the first route that matches.
 */
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { queryFlag } from "../http/query-flags.ts";
import { ApiError } from "../http/status.ts";
import { hubFor, reserveWatch, READ_PAGE, type HubWatcher } from "./watch-hub.ts";
import { includeObject, tableVersion, type TableVersion } from "../http/table.ts";
import type { ObjectMatcher, WatchChange, WatchKind, WatchObject } from "./watch-kind.ts";
import { WatchStream, type WatchEventType } from "./watch-stream.ts";

/** What one watch may queue for a client that does not read: then it is dropped. */
export const MAX_QUEUED_BYTES = 1024 * 1024;

/**
 * How often a watch that allows bookmarks gets one (the API server's bookmark frequency, a minute):
 * a client that reconnects resumes from its version instead of relisting.
 */
export const BOOKMARK_INTERVAL_MS = 60_000;

type Handler = (request: ApiRequest, api: ApiContext) => Response | Promise<Response>;

/** Whether the query asks for a watch, read as the API server reads a boolean (query-flags.ts: `watch=True` is one). */
export function isWatchRequest(query: URLSearchParams): boolean {
  return queryFlag(query, "watch") === true;
}

/** A collection: a watch of `kind` when the query asks for one, else `list`. */
export function watchOrList(request: ApiRequest, api: ApiContext, kind: WatchKind, list: Handler): Response | Promise<Response> {
  return isWatchRequest(request.query) ? serveWatch(request, api, kind) : list(request, api);
}

export interface WatchOptions {
  /** Undefined for "", "0" or none: start with the current objects. */
  resourceVersion: number | undefined;
  timeoutSeconds: number | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
}

export function parseWatchOptions(query: URLSearchParams): WatchOptions {
  const rv = query.get("resourceVersion") ?? "";
  if (rv !== "" && !/^\d+$/.test(rv)) {
    throw ApiError.badRequest(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`);
  }
  const timeout = query.get("timeoutSeconds");
  if (timeout !== null && !/^\d+$/.test(timeout)) throw ApiError.badRequest(`timeoutSeconds: Invalid value: ${JSON.stringify(timeout)}: must be a non-negative integer`);
  const flag = (name: string) => queryFlag(query, name);
  return {
    resourceVersion: rv === "" || rv === "0" ? undefined : Number(rv),
    timeoutSeconds: timeout === null || timeout === "0" ? undefined : Number(timeout),
    allowWatchBookmarks: flag("allowWatchBookmarks") ?? false,
    sendInitialEvents: flag("sendInitialEvents"),
  };
}

/** `maxQueuedBytes` is for tests: the bound at which a client that does not read is dropped. */
export function serveWatch(request: ApiRequest, api: ApiContext, kind: WatchKind, maxQueuedBytes = MAX_QUEUED_BYTES): Response {
  const options = parseWatchOptions(request.query);
  const matcher = kind.matcher(request);
  const table = tableVersion(request.headers);
  if (table) includeObject(request.query); // a bad includeObject is the list's 400, before the stream starts
  const release = reserveWatch(api);
  if (!release) {
    throw new ApiError(429, "TooManyRequests", `too many open watches (at most ${api.limits.maxWatches}), please try again later`, { retryAfterSeconds: 1 });
  }
  const watcher = new Watcher(api, kind, request, matcher, table);
  const stream = new WatchStream(maxQueuedBytes, () => watcher.end());
  watcher.start(stream, options, request.signal, release);
  return stream.response;
}

/** One client's watch: what it has been sent (cursor, and for pods the objects it holds). */
class Watcher implements HubWatcher {
  cursor = 0;
  /** Pods the client holds as matching its selectors: leaving them is DELETED, entering ADDED. */
  private readonly known = new Set<string>();
  /** The cursor when the current read began: an event created after it is new to the client. */
  private readingFrom: number | undefined;
  private stream!: WatchStream;
  private cleanups: (() => void)[] = [];

  constructor(
    private readonly api: ApiContext,
    private readonly kind: WatchKind,
    private readonly request: ApiRequest,
    private readonly matcher: ObjectMatcher,
    /** The Table version asked for (each object a one-row Table), or undefined for plain objects. */
    private readonly table: TableVersion | undefined,
  ) {}

  private get namespace(): string | undefined {
    return this.request.params.namespace;
  }

  start(stream: WatchStream, options: WatchOptions, signal: AbortSignal, release: () => void): void {
    this.stream = stream;
    this.cleanups.push(release);
    const onAbort = () => stream.drop();
    signal.addEventListener("abort", onAbort, { once: true });
    this.cleanups.push(() => signal.removeEventListener("abort", onAbort));
    if (signal.aborted) return stream.drop();
    // The API server's ListResource: no timeoutSeconds is a lifetime between --min-request-timeout and
    // twice it, spread so that clients that started together do not all come back at once.
    const lifetimeSeconds = options.timeoutSeconds ?? this.api.limits.minRequestTimeoutSeconds * (1 + Math.random());
    this.cleanups.push(this.api.clock.setTimeout(() => stream.close(), lifetimeSeconds * 1000));

    const { store } = this.api;
    const from = options.resourceVersion;
    const compacted = store.compactedRevision();
    if (from !== undefined && from < compacted && options.sendInitialEvents !== true) {
      stream.send("ERROR", new ApiError(410, "Expired", `too old resource version: ${from} (${compacted})`).toStatus());
      return stream.close();
    }
    const initial = options.sendInitialEvents ?? from === undefined;
    // One snapshot: the objects and the revision they are as of.
    const { head, current, gone } = store.db.transaction(() => ({
      head: store.revision(),
      current: initial || this.kind.mutableFields ? this.kind.current(store, this.namespace, this.api.nodeName) : [],
      // Deleted since the client's version (between kubectl delete's list and its watch): it holds them, their DELETED is due.
      gone: !initial && from !== undefined && this.kind.mutableFields ? this.kind.changedSince(store, from, READ_PAGE, this.api.nodeName).filter((change) => change.deleted) : [],
    }))();
    if (initial) {
      this.cursor = head;
      const added = current.filter((change) => this.matches(change));
      for (const change of added) this.known.add(change.key);
      const bookmark = options.sendInitialEvents && options.allowWatchBookmarks ? this.bookmark(head, { "k8s.io/initial-events-end": "true" }) : undefined;
      // Rendered as the client reads them: a long list is neither held twice nor counted against the bound.
      const render = (change: WatchChange) => this.render(change);
      stream.sendInitial(
        (function* (): Generator<[WatchEventType, unknown]> {
          for (const change of added) yield ["ADDED", render(change)];
          if (bookmark) yield bookmark;
        })(),
      );
    } else {
      this.cursor = from ?? head;
      // The objects that existed at the client's version: it holds them from its list.
      for (const change of [...current, ...gone]) if (change.createdRevision <= this.cursor && this.matches(change)) this.known.add(change.key);
    }
    const hub = hubFor(this.api, this.kind);
    hub.join(this);
    this.cleanups.push(() => hub.leave(this));
    if (options.allowWatchBookmarks) this.bookmarkEvery(BOOKMARK_INTERVAL_MS);
  }

  /** Sends a bookmark at the version of the last change sent, every `intervalMs` while the stream is open. */
  private bookmarkEvery(intervalMs: number): void {
    let cancel = () => {};
    const arm = () => {
      cancel = this.api.clock.setTimeout(() => {
        if (this.stream.send(...this.bookmark(this.cursor))) arm();
      }, intervalMs);
    };
    arm();
    this.cleanups.push(() => cancel());
  }

  deliver(changes: readonly WatchChange[]): void {
    this.readingFrom ??= this.cursor;
    for (const change of changes) {
      if (change.revision <= this.cursor) continue;
      this.cursor = change.revision;
      const type = this.kind.mutableFields ? this.podEvent(change) : this.matches(change) ? (change.createdRevision > this.readingFrom ? "ADDED" : "MODIFIED") : undefined;
      if (type && !this.send(type, change)) return;
    }
    if (changes.length < READ_PAGE) this.readingFrom = undefined;
  }

  fail(message: string): void {
    this.stream.send("ERROR", new ApiError(500, "InternalError", message).toStatus());
    this.stream.close();
  }

  end(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }

  private podEvent(change: WatchChange): "ADDED" | "MODIFIED" | "DELETED" | undefined {
    const held = this.known.has(change.key);
    if (!change.deleted && this.matches(change)) {
      this.known.add(change.key);
      if (held && change.presenceOnly) return undefined;
      return held ? "MODIFIED" : "ADDED";
    }
    this.known.delete(change.key);
    return held ? "DELETED" : undefined;
  }

  private matches(change: WatchChange): boolean {
    if (this.namespace !== undefined && change.namespace !== this.namespace) return false;
    return this.matcher(change.object);
  }

  private send(type: "ADDED" | "MODIFIED" | "DELETED", change: WatchChange): boolean {
    return this.stream.send(type, this.render(change));
  }

  private render(change: WatchChange): unknown {
    return this.table ? this.tableOf(change.object) : change.object;
  }

  private tableOf(object: WatchObject): unknown {
    return {
      kind: "Table",
      apiVersion: this.table,
      metadata: { resourceVersion: object.metadata.resourceVersion },
      columnDefinitions: this.kind.columns,
      rows: [this.kind.row(object, this.api.clock.now(), this.request, this.table!)],
    };
  }

  /**
   * An object of the watched kind carrying only a resourceVersion; annotated with
   * `k8s.io/initial-events-end` it ends the initial events of a watch-list (`sendInitialEvents`).
   */
  private bookmark(revision: number, annotations?: Record<string, string>): [WatchEventType, unknown] {
    return ["BOOKMARK", {
      kind: this.kind.kind,
      apiVersion: "v1",
      metadata: { resourceVersion: String(revision), ...(annotations && { annotations }) },
    }];
  }
}
