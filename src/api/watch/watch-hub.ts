/**
 * Delivery from the store to the open watches of one resource. The hub listens to the commit feed
 * only while a watch is open; a commit schedules one read (commits in the same turn share it) of
 * the rows changed since the hub's cursor on the API's read-only connection, and every watcher
 * gets that batch. Nothing runs while nothing changes, and the writer's commit only schedules the
 * read: the loop never waits on a watch.
 */
import type { ApiContext } from "../http/context.ts";
import type { WatchChange, WatchKind } from "./watch-kind.ts";

/** Rows read per step; a longer backlog is read in further steps, the loop getting a turn between them. */
export const READ_PAGE = 500;

export interface HubWatcher {
  /** Rows at or below this revision were already handed to the watcher (its RV, or its initial list). */
  readonly cursor: number;
  deliver(changes: readonly WatchChange[]): void;
  /** The store could not be read: the watch ends with an ERROR event carrying `message`. */
  fail(message: string): void;
}

export class WatchHub {
  private readonly watchers = new Set<HubWatcher>();
  private cursor = 0;
  private unsubscribe: (() => void) | undefined;
  private scheduled = false;

  constructor(
    private readonly api: ApiContext,
    private readonly kind: WatchKind,
  ) {}

  get size(): number {
    return this.watchers.size;
  }

  join(watcher: HubWatcher): void {
    // A watcher behind the hub pulls the hub back; the others skip rows they already had.
    this.cursor = this.watchers.size === 0 ? watcher.cursor : Math.min(this.cursor, watcher.cursor);
    this.watchers.add(watcher);
    this.unsubscribe ??= this.api.commits.subscribe(() => this.schedule());
    // A commit may have landed between the watcher's own read and joining (another process under `serve`).
    this.schedule();
  }

  leave(watcher: HubWatcher): void {
    this.watchers.delete(watcher);
    if (this.watchers.size > 0) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.read();
    });
  }

  private read(): void {
    if (this.watchers.size === 0) return;
    let changes: WatchChange[];
    try {
      changes = this.kind.changedSince(this.api.store, this.cursor, READ_PAGE, this.api.nodeName);
    } catch (error) {
      // Thrown here it would end the process; the clients reconnect, as from a failed API server.
      for (const watcher of [...this.watchers]) watcher.fail(`reading the state database: ${(error as Error).message}`);
      return;
    }
    if (changes.length === 0) return;
    this.cursor = changes.at(-1)!.revision;
    for (const watcher of [...this.watchers]) watcher.deliver(changes);
    if (changes.length >= READ_PAGE) this.schedule();
  }
}

interface Registry {
  open: number;
  hubs: Map<WatchKind, WatchHub>;
}

const registries = new WeakMap<ApiContext, Registry>();

function registry(api: ApiContext): Registry {
  let found = registries.get(api);
  if (!found) registries.set(api, (found = { open: 0, hubs: new Map() }));
  return found;
}

export function hubFor(api: ApiContext, kind: WatchKind): WatchHub {
  const { hubs } = registry(api);
  let hub = hubs.get(kind);
  if (!hub) hubs.set(kind, (hub = new WatchHub(api, kind)));
  return hub;
}

/** Takes one of `api.limits.maxWatches` slots; false when all are taken. The release is idempotent. */
export function reserveWatch(api: ApiContext): (() => void) | undefined {
  const counts = registry(api);
  if (counts.open >= api.limits.maxWatches) return undefined;
  counts.open++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    counts.open--;
  };
}

/** Watches open on this API now (tests and the bench read it). */
export function openWatches(api: ApiContext): number {
  return registry(api).open;
}
