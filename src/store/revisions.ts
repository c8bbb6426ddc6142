/**
 * The one revision counter behind every resourceVersion: pods, events, refused manifests, the
 * API's pods and namespaces draw from it, so a watch from resourceVersion N sees every write after N, whichever
 * table it went to. It lives beside the agent's write connection (one writer per database).
 */
import type { Database } from "bun:sqlite";

/**
 * The highest revision any table holds, the compacted one included (a pruned row's revision must
 * never be handed out again): where the counter starts and what a list reports.
 */
export const MAX_REVISION_SQL = [
  "SELECT max(revision) AS revision FROM (SELECT max(revision) AS revision FROM pods",
  "SELECT max(revision) FROM events",
  "SELECT max(revision) FROM invalid_manifests",
  "SELECT max(resource_version) FROM api_pods",
  "SELECT max(revision) FROM namespaces",
  "SELECT max(revision) FROM api_objects",
  "SELECT revision FROM compaction)",
].join(" UNION ALL ");

export class RevisionCounter {
  private value: number;
  /** Transactions open (nested ones are savepoints): a commit is announced when the outermost ends. */
  private depth = 0;
  /** The last revision told to the listeners. */
  private announced: number;

  /**
   * @param initial the highest revision in the database (a pruned one included: see maxRevision).
   * @param onCommit told the new revision after each transaction that raised it (the API's watches listen).
   */
  constructor(initial: number, private readonly onCommit: (revision: number) => void = () => {}) {
    this.value = initial;
    this.announced = initial;
  }

  /** The last revision handed out. */
  get current(): number {
    return this.value;
  }

  /** A new revision, for a row written inside `transact`. */
  next(): number {
    return ++this.value;
  }

  /**
   * Runs `write` in one transaction. If it throws, nothing was written and the revisions it took
   * are given back (a revision is never skipped by a rolled-back write); once it commits, the
   * listeners hear the newest revision, never before the commit. A `transact` inside another is a
   * savepoint of the outer one (a namespace's delete deletes its pods in its own transaction): only
   * the outermost commit is announced.
   */
  transact<T>(db: Database, write: () => T): T {
    const before = this.value;
    let result: T;
    this.depth++;
    try {
      result = db.transaction(write)();
    } catch (error) {
      this.value = before;
      throw error;
    } finally {
      this.depth--;
    }
    if (this.depth === 0 && this.value > this.announced) {
      this.announced = this.value;
      this.onCommit(this.value);
    }
    return result;
  }
}
