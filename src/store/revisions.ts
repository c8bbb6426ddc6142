/**
 * The one revision counter behind every resourceVersion: pods, events, refused manifests and the
 * API's pods draw from it, so a watch from resourceVersion N sees every write after N, whichever
 * table it went to. It lives beside the agent's write connection (one writer per database).
 */
import type { Database } from "bun:sqlite";

export class RevisionCounter {
  private value: number;

  /**
   * @param initial the highest revision in the database (a pruned one included: see maxRevision).
   * @param onCommit told the new revision after each transaction that raised it (the API's watches listen).
   */
  constructor(initial: number, private readonly onCommit: (revision: number) => void = () => {}) {
    this.value = initial;
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
   * listeners hear the newest revision, never before the commit.
   */
  transact<T>(db: Database, write: () => T): T {
    const before = this.value;
    let result: T;
    try {
      result = db.transaction(write)();
    } catch (error) {
      this.value = before;
      throw error;
    }
    if (this.value !== before) this.onCommit(this.value);
    return result;
  }
}
