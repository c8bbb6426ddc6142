/**
 * `get pods` from the state database: the v1 objects the agent checkpointed, live pods only, in
 * the API server's order (namespace, then name). `watchPods` is the `-w` half: it polls the
 * pods' revision and hands over each pod whose object changed.
 */
import { sleep, type Clock } from "../clock.ts";
import type { V1Pod } from "../v1/v1.ts";
import { openStoreReader } from "./reader.ts";

export interface PodsQuery {
  /** `--db` as given; the default path applies when absent. */
  db?: string;
  /** Undefined means every namespace. */
  namespace: string | undefined;
  name: string | undefined;
}

/**
 * Live pods matching the query, with the refused manifest files (STATUS Invalid) among them in the
 * same order. Throws a one-line UserError-shaped StoreError for a missing or locked db.
 */
export async function listPodsFromStore(query: PodsQuery): Promise<V1Pod[]> {
  using reader = openStoreReader(query.db);
  const filter = { namespace: query.namespace, name: query.name };
  const rows = [...reader.store.livePods(filter), ...reader.store.refusedPods(filter)];
  const order = (row: { namespace: string; name: string }) => `${row.namespace}\u0000${row.name}`;
  return rows.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0)).map((row) => row.object);
}

export interface WatchPodsOptions extends PodsQuery {
  clock: Clock;
  /** Called with each changed pod (a deleted one carries its last object). */
  onPod: (pod: V1Pod, deleted: boolean) => void;
  signal: AbortSignal;
  /** Poll period; default 500 ms. A read costs one indexed query. */
  intervalMs?: number;
  /** Hand over changes made after this revision (from `podsRevision`, read before the list); default: now. */
  sinceRevision?: number;
}

/** The pods' current revision: read it before listing, so `watchPods` misses nothing written meanwhile. */
export function podsRevision(db?: string): number {
  using reader = openStoreReader(db);
  return reader.store.revision();
}

/** Polls until `signal` aborts; starts from `sinceRevision`, else the current revision (the caller printed the list). */
export async function watchPods(options: WatchPodsOptions): Promise<void> {
  using reader = openStoreReader(options.db);
  let revision = options.sinceRevision ?? reader.store.revision();
  while (!options.signal.aborted) {
    try {
      await sleep(options.clock, options.intervalMs ?? 500, options.signal);
    } catch {
      return;
    }
    for (const row of reader.store.podsChangedSince(revision)) {
      revision = Math.max(revision, row.revision);
      if (options.namespace !== undefined && row.namespace !== options.namespace) continue;
      if (options.name !== undefined && row.name !== options.name) continue;
      options.onPod(row.object, row.deletedAt !== null);
    }
  }
}
