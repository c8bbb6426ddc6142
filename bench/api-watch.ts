/**
 * The API watch's figures (issue 12): delivery latency from the store's commit to the client
 * reading the event's line over HTTP, with 1 and with many open watches, and the memory each open
 * watch costs. The agent's writer (SqliteStore) commits one event at a time and tells the commit
 * feed, as `run` wires it; the clients are fetch() streams on loopback reading `?watch=true`.
 * Figures only, no assertions.
 *
 *   node_modules/.bin/bun bench/api-watch.ts [COMMITS] [WATCHES]    (default: 200 50)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../src/clock.ts";
import { DEFAULT_LIMITS, type ApiContext, type CommitFeed } from "../src/api/http/context.ts";
import type { ApiRequest } from "../src/api/http/http.ts";
import { openWatches } from "../src/api/watch/watch-hub.ts";
import { eventKind } from "../src/api/resources/watch-kinds.ts";
import { serveWatch, watchOrList } from "../src/api/watch/watch.ts";
import { openAgentDatabase, openReadonlyDatabase } from "../src/store/open.ts";
import { SqliteStore } from "../src/store/pod-store.ts";
import { StoreReader } from "../src/store/queries.ts";

const commits = Number(process.argv[2] ?? 200);
const watchCount = Number(process.argv[3] ?? 50);

class Feed implements CommitFeed {
  private readonly listeners = new Set<(revision: number) => void>();
  subscribe(listener: (revision: number) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  publish(revision: number) {
    for (const listener of this.listeners) listener(revision);
  }
}

const root = mkdtempSync(join(tmpdir(), "minikubelet-bench-watch-"));
const agent = openAgentDatabase(join(root, "state.db"));
const store = new SqliteStore({ db: agent.db, clock: realClock });
const feed = new Feed();
const reader = new StoreReader(openReadonlyDatabase(agent.path));
const api: ApiContext = { store: reader, dbPath: agent.path, clock: realClock, nodeName: "bench", commits: feed, limits: { ...DEFAULT_LIMITS, maxWatches: 100_000 } };

function request(url: URL, signal: AbortSignal, headers: Headers): ApiRequest {
  return { method: "GET", url, headers, params: {}, query: url.searchParams, signal, body: async () => new Uint8Array(), upgrade: () => undefined };
}

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 0,
  fetch: (incoming) => watchOrList(request(new URL(incoming.url), incoming.signal, incoming.headers), api, eventKind, () => new Response("no list", { status: 404 })),
});

let sequence = 0;
function commitOne(): string {
  const message = `bench ${++sequence}`;
  store.saveEvents([{ at: Date.now(), type: "Normal", reason: "Bench", podKey: "bench/p", namespace: "bench", pod: "p", podUid: "uid-p", container: "", message }]);
  feed.publish(reader.revision());
  return message;
}

/** Opens `count` watches over HTTP, calling `onLine` with each line's message and arrival time. */
async function openClients(count: number, onLine: (message: string, at: number) => void): Promise<AbortController> {
  const stop = new AbortController();
  const open = openWatches(api);
  const from = reader.revision();
  for (let i = 0; i < count; i++) {
    // Bun's fetch resolves at the first body byte (curl sees the headers at once): do not wait for it.
    void (async () => {
      const decoder = new TextDecoder();
      let buffered = "";
      try {
        const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/events?watch=true&resourceVersion=${from}`, { signal: stop.signal });
        for await (const chunk of response.body!) {
          buffered += decoder.decode(chunk, { stream: true });
          for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
            const text = buffered.slice(0, end).trim();
            if (text !== "") onLine((JSON.parse(text) as { object: { message: string } }).object.message, performance.now());
            buffered = buffered.slice(end + 1);
          }
        }
      } catch {
        // aborted at the end of the run
      }
    })();
  }
  while (openWatches(api) < open + count) await Bun.sleep(5);
  return stop;
}

async function latency(clients: number): Promise<void> {
  const pending = new Map<string, { start: number; left: number; last: number }>();
  const done: number[] = [];
  let resolveOne: (() => void) | undefined;
  const stop = await openClients(clients, (message, at) => {
    const entry = pending.get(message);
    if (!entry) return;
    entry.last = at;
    if (--entry.left === 0) {
      done.push(entry.last - entry.start);
      pending.delete(message);
      resolveOne?.();
    }
  });
  for (let i = 0; i < commits; i++) {
    const arrived = new Promise<void>((resolve) => (resolveOne = resolve));
    const start = performance.now();
    const message = commitOne();
    pending.set(message, { start, left: clients, last: start });
    await arrived;
  }
  stop.abort();
  done.sort((a, b) => a - b);
  const at = (q: number) => done[Math.min(done.length - 1, Math.floor(q * done.length))]!.toFixed(2);
  console.log(`${String(clients).padStart(4)} watch(es), ${commits} commits: commit -> the last client read its line: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
  await Bun.sleep(50);
}

/** Heap per open watch, measured at the handler (no sockets): what the API keeps for each. */
async function memory(count: number): Promise<void> {
  await Bun.sleep(20);
  Bun.gc(true);
  const before = process.memoryUsage().heapUsed;
  const stop = new AbortController();
  const held: Response[] = [];
  const url = new URL(`http://x/api/v1/events?watch=true&resourceVersion=${reader.revision()}`);
  for (let i = 0; i < count; i++) held.push(serveWatch(request(url, stop.signal, new Headers()), api, eventKind));
  await Bun.sleep(20);
  Bun.gc(true);
  const after = process.memoryUsage().heapUsed;
  console.log(`${count} open watches (handler side, idle): ${((after - before) / count / 1024).toFixed(2)} KiB heap each (${openWatches(api)} open)`);
  stop.abort();
  held.length = 0;
}

try {
  commitOne();
  await memory(1000);
  await latency(1);
  await latency(watchCount);
} finally {
  server.stop(true);
  reader.db.close();
  agent.close();
  rmSync(root, { recursive: true, force: true });
}
