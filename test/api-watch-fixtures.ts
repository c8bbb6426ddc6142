import type { ApiContext, CommitFeed } from "../src/api/http/context.ts";
import { DEFAULT_LIMITS, type ApiLimits } from "../src/api/http/context.ts";
import type { ApiRequest } from "../src/api/http/http.ts";
import { openReadonlyDatabase } from "../src/store/open.ts";
import { StoreReader } from "../src/store/queries.ts";
import { storeHarness } from "./store-fixtures.ts";

/** A CommitFeed the test owns: `publish` is what the agent's store does after each commit. */
export class FakeCommitFeed implements CommitFeed {
  readonly listeners = new Set<(revision: number) => void>();
  subscribe(listener: (revision: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  publish(revision: number): void {
    for (const listener of [...this.listeners]) listener(revision);
  }
}

/**
 * A kubelet on the fake runtime writing a real database, the API's read-only view of it, and a
 * feed told after each of the store's commits (as api-core wires the agent's store).
 */
export function apiHarness(dir: string, limits: Partial<ApiLimits> = {}) {
  const h = storeHarness(dir, { retention: { eventTtlMs: 120_000, intervalMs: 24 * 3_600_000 } });
  const feed = new FakeCommitFeed();
  const store = h.store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ["savePod", "deletePod", "saveEvents", "prune"]) {
    const original = store[method]!.bind(h.store);
    store[method] = (...args: unknown[]) => {
      const result = original(...args);
      feed.publish(0);
      return result;
    };
  }
  const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
  const api: ApiContext = { store: reader, dbPath: h.dbPath, clock: h.clock, nodeName: "lab", commits: feed, limits: { ...DEFAULT_LIMITS, ...limits } };
  return {
    ...h,
    api,
    feed,
    close() {
      h.kubelet.stop();
      reader.db.close();
      h.agent.close();
    },
  };
}

/** A GET as the server hands it to a route. */
/** A write (POST, PUT, DELETE ...) with a JSON body: an object is encoded, a string sent as it is. */
export function jsonRequest(method: string, path: string, params: Record<string, string>, body?: unknown): ApiRequest {
  const url = new URL(path, "http://127.0.0.1");
  return {
    method,
    url,
    headers: new Headers({ "Content-Type": "application/json" }),
    params,
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new TextEncoder().encode(body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body)),
    upgrade: () => undefined,
  };
}

export function apiRequest(path: string, options: { params?: Record<string, string>; accept?: string; signal?: AbortSignal } = {}): ApiRequest {
  const url = new URL(path, "http://127.0.0.1");
  return {
    method: "GET",
    url,
    headers: new Headers(options.accept ? { Accept: options.accept } : {}),
    params: options.params ?? {},
    query: url.searchParams,
    signal: options.signal ?? new AbortController().signal,
    body: async () => new Uint8Array(),
    upgrade: () => undefined,
  };
}

/** A JSON pod create in namespace default, as the server hands it to the create route. */
export function podCreateRequest(body: unknown): ApiRequest {
  const url = new URL("/api/v1/namespaces/default/pods", "http://127.0.0.1");
  return {
    method: "POST",
    url,
    headers: new Headers({ "Content-Type": "application/json" }),
    params: { namespace: "default" },
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new TextEncoder().encode(JSON.stringify(body)),
    upgrade: () => undefined,
  };
}

export const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

export interface WatchLine {
  type: string;
  object: Record<string, any>;
}

/** Reads a watch response's lines as they arrive, like kubectl's decoder. */
export function readWatch(response: Response) {
  const reader = response.body!.getReader();
  const lines: WatchLine[] = [];
  const state = { ended: false, failed: undefined as unknown };
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
          const line = buffered.slice(0, end).trim();
          if (line !== "") lines.push(JSON.parse(line) as WatchLine);
          buffered = buffered.slice(end + 1);
        }
      }
      state.ended = true;
    } catch (error) {
      state.failed = error;
    }
  })();
  return { lines, state, cancel: () => reader.cancel() };
}

/** Lets scheduled deliveries (setImmediate) and the reader's promise chains run. */
export async function settle(): Promise<void> {
  for (let round = 0; round < 5; round++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** `ADDED crash-lab 1 CrashLoopBackOff`: type, pod name, restarts and waiting reason (or Running). */
export function podLine(line: WatchLine): string {
  const pod = line.object;
  const status = pod.status?.containerStatuses?.[0];
  return `${line.type} ${pod.metadata.name} ${status?.restartCount ?? "-"} ${status?.state?.waiting?.reason ?? (status?.state?.running ? "Running" : (status?.state?.terminated?.reason ?? "-"))}`;
}
