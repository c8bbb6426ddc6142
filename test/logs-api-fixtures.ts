import type { Clock } from "../src/clock.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../src/api/http/context.ts";
import type { ApiRequest } from "../src/api/http/http.ts";
import { logRoutes } from "../src/api/resources/pods/logs-api.ts";
import { ApiError } from "../src/api/http/status.ts";
import type { Runtime } from "../src/runtime/runtime.ts";
import { openStoreReader } from "../src/store/reader.ts";

/** An ApiContext over the database at `dbPath` on its own read-only connection, as `serve` builds one. */
export function logsApi(dbPath: string, clock: Clock, runtime?: Runtime): ApiContext & Disposable {
  const reader = openStoreReader(dbPath);
  return {
    store: reader.store,
    dbPath,
    clock,
    nodeName: "test-node",
    runtime,
    commits: { subscribe: () => () => {} },
    limits: DEFAULT_LIMITS,
    [Symbol.dispose]: () => reader[Symbol.dispose](),
  };
}

/** Calls the pods/log route as the server would for `GET <path>`. */
export function getLog(api: ApiContext, path: string, signal = new AbortController().signal): Promise<Response> {
  const url = new URL(path, "https://127.0.0.1");
  const match = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname);
  if (!match) throw new Error(`not a pods/log path: ${path}`);
  const request: ApiRequest = {
    method: "GET",
    url,
    headers: new Headers(),
    params: { namespace: match[1]!, name: match[2]! },
    query: url.searchParams,
    signal,
    body: async () => new Uint8Array(),
    upgrade: () => undefined,
  };
  return Promise.resolve(logRoutes[0]!.handle(request, api));
}

/** The Status a handler threw, as `{ code, reason, message }`; fails when it answered instead. */
export async function statusOf(answer: Promise<Response>): Promise<{ code: number; reason: string; message: string }> {
  try {
    const response = await answer;
    throw new Error(`expected an ApiError, got ${response.status}: ${await response.text()}`);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, reason: error.reason, message: error.message };
  }
}
