import type { ApiContext } from "../src/api/http/context.ts";
import { DEFAULT_LIMITS, type ApiLimits } from "../src/api/http/context.ts";
import type { ApiRequest, Route } from "../src/api/http/http.ts";
import { ApiError, type V1Status } from "../src/api/http/status.ts";
import { openReadonlyDatabase } from "../src/store/open.ts";
import { StoreReader } from "../src/store/queries.ts";
import type { Clock } from "../src/clock.ts";
import type { Runtime } from "../src/runtime/runtime.ts";

export const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/** An ApiContext reading `dbPath` on its own read-only connection, as the server builds one. */
export function apiContext(dbPath: string, clock: Clock, options: { nodeName?: string; runtime?: Pick<Runtime, "name">; limits?: Partial<ApiLimits> } = {}): ApiContext & Disposable {
  const db = openReadonlyDatabase(dbPath);
  return {
    store: new StoreReader(db),
    dbPath,
    clock,
    nodeName: options.nodeName ?? "lab",
    ...(options.runtime && { runtime: options.runtime as Runtime }),
    commits: { subscribe: () => () => {} },
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    [Symbol.dispose]: () => db.close(),
  };
}

/** Finds the route for `method path` in `routes` and calls it as the server would, Status errors included. */
export async function call(routes: Route[], method: string, path: string, api: ApiContext, options: { accept?: string; query?: Record<string, string>; body?: string | Uint8Array; contentType?: string } = {}) {
  const url = new URL(`https://127.0.0.1:6443${path}`);
  for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
  for (const route of routes) {
    if (route.method !== method) continue;
    const params = matchPath(route.path, url.pathname);
    if (!params) continue;
    const request: ApiRequest = {
      method,
      url,
      headers: new Headers({ ...(options.accept && { accept: options.accept }), ...(options.contentType && { "content-type": options.contentType }) }),
      params,
      query: url.searchParams,
      signal: new AbortController().signal,
      body: async () => (typeof options.body === "string" || options.body === undefined ? new TextEncoder().encode(options.body ?? "") : options.body),
      upgrade: () => undefined,
    };
    try {
      const response = await route.handle(request, api);
      return { status: response.status, contentType: response.headers.get("content-type"), body: (await response.json()) as any };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { status: error.code, contentType: "application/json", body: error.toStatus() as V1Status as any };
    }
  }
  throw new Error(`no route for ${method} ${path}`);
}

function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    if (part.startsWith(":")) {
      if (!got[i]) return undefined;
      params[part.slice(1)] = decodeURIComponent(got[i]!);
    } else if (part !== got[i]) return undefined;
  }
  return params;
}
