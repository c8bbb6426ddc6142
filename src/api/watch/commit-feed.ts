/**
 * The CommitFeed the API's watches subscribe to. Under `run` the agent's store publishes its
 * revision after each commit; under `serve` nothing in this process writes, so a watcher on the
 * database's files reads the revision when they change (with a slow poll behind it, since file
 * notifications can be missed) and publishes it when it rose.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { CommitFeed } from "../http/context.ts";

export class CommitBroadcast implements CommitFeed {
  private readonly listeners = new Set<(revision: number) => void>();
  private latest = 0;
  private scheduled = false;

  subscribe(listener: (revision: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Called by the committer; the listeners hear it once the committing code has returned, so no
   * watch runs inside the loop's pass. A burst of commits (one per pod of a pass) is one wake-up
   * with the newest revision: watches read everything after their own last revision anyway.
   */
  publish(revision: number): void {
    this.latest = Math.max(this.latest, revision);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.deliver());
  }

  private deliver(): void {
    this.scheduled = false;
    for (const listener of this.listeners) {
      try {
        listener(this.latest);
      } catch {
        // A watch's own failure ends that watch; the commit has happened regardless.
      }
    }
  }
}

export interface DatabaseWatchOptions {
  dbPath: string;
  /** The store's current revision (a cheap max() query on the API's read-only connection). */
  revision: () => number;
  /** Coalesces a burst of file changes (a commit touches the WAL several times). */
  debounceMs?: number;
  pollMs?: number;
}

/** Publishes the revision whenever another process's commit raised it; `close()` stops watching. */
export function watchDatabase(feed: CommitBroadcast, options: DatabaseWatchOptions): { close(): void } {
  const debounceMs = options.debounceMs ?? 10;
  let last = safeRevision(options.revision, 0);
  let pending: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    pending = undefined;
    const now = safeRevision(options.revision, last);
    if (now !== last) {
      last = now;
      feed.publish(now);
    }
  };
  const soon = () => (pending ??= setTimeout(check, debounceMs));
  const name = basename(options.dbPath);
  let watcher: FSWatcher | undefined;
  try {
    // The directory, not the files: the WAL comes and goes with checkpoints.
    watcher = watch(dirname(options.dbPath), (_event, file) => {
      if (file === null || String(file).startsWith(name)) soon();
    });
  } catch {
    watcher = undefined;
  }
  const poll = setInterval(check, options.pollMs ?? 1000);
  return {
    close() {
      watcher?.close();
      clearInterval(poll);
      if (pending) clearTimeout(pending);
    },
  };
}

/** A locked or briefly unreadable database is read again at the next change or poll. */
function safeRevision(read: () => number, fallback: number): number {
  try {
    return read();
  } catch {
    return fallback;
  }
}
