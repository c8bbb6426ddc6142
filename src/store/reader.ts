/** A command's read-only view of the state database, closed with `using`. */
import { openReadonlyDatabase } from "./open.ts";
import { resolveDbPath } from "./db-path.ts";
import { StoreReader } from "./queries.ts";

export interface OpenReader {
  path: string;
  store: StoreReader;
  [Symbol.dispose](): void;
}

/** Opens the database at `--db` (or the default path) read-only; StoreError when missing or locked. */
export function openStoreReader(dbFlag?: string): OpenReader {
  const path = resolveDbPath(dbFlag);
  const db = openReadonlyDatabase(path);
  return { path, store: new StoreReader(db), [Symbol.dispose]: () => db.close() };
}
