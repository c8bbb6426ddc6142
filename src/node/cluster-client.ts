/**
 * The node's client of the cluster's API server: JSON requests and watches over HTTPS with the
 * kubeconfig's credentials (client-go's REST client, reduced to what a kubelet asks). An answer
 * that is not 2xx is a ClusterApiError carrying the API server's Status (code, reason, message),
 * so a caller tells Conflict from NotFound from Forbidden as client-go's apierrors do. Every
 * request is bounded in time; nothing here retries: the callers own their retry policy.
 */
import type { ClusterCredentials } from "./kubeconfig.ts";

/** client-go's default for a request without a deadline of its own. */
export const REQUEST_TIMEOUT_MS = 30_000;

export type ClusterVerb = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The patch types the API server takes, by Content-Type. */
export const PATCH_TYPE = {
  strategic: "application/strategic-merge-patch+json",
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
} as const;

export interface ClusterRequest {
  method: ClusterVerb;
  /** `/api/v1/namespaces/NS/pods`, without the server. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default application/json; a PATCH names its patch type. */
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A v1 Status the API server answered with (or one drawn for a transport failure, code 0). */
export class ClusterApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly request: { method: string; path: string },
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ClusterApiError";
  }

  get notFound(): boolean {
    return this.code === 404;
  }
  get conflict(): boolean {
    return this.code === 409 && this.reason === "Conflict";
  }
  get alreadyExists(): boolean {
    return this.code === 409 && this.reason === "AlreadyExists";
  }
  get forbidden(): boolean {
    return this.code === 403;
  }
  /** The API server could not be reached or answered with no Status (code 0), or a 5xx / 429. */
  get unavailable(): boolean {
    return this.code === 0 || this.code === 429 || this.code >= 500;
  }
  /** A watch from a compacted resourceVersion (410 Gone / Expired): list again. */
  get expired(): boolean {
    return this.code === 410;
  }
}

export interface WatchEvent<T = Record<string, any>> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

/** What a caller may ask of the cluster: a narrow seam, so tests can stand a fake in. */
export interface ClusterApi {
  request<T = Record<string, any>>(request: ClusterRequest): Promise<T>;
  /** A watch stream; ends when the server ends it, the signal aborts, or the connection breaks. */
  watch<T = Record<string, any>>(path: string, query: Record<string, string | number | boolean | undefined>, signal: AbortSignal): AsyncIterable<WatchEvent<T>>;
}

export class ClusterClient implements ClusterApi {
  /** Requests sent, by `VERB resource` (the bench's figure: what steady state costs the API server). */
  readonly requestCounts = new Map<string, number>();

  constructor(private readonly credentials: ClusterCredentials) {}

  get server(): string {
    return this.credentials.server;
  }

  async request<T = Record<string, any>>(request: ClusterRequest): Promise<T> {
    const response = await this.send(request, request.timeoutMs ?? REQUEST_TIMEOUT_MS);
    const text = await response.text();
    if (!response.ok) throw apiError(response.status, text, request);
    return (text === "" ? {} : JSON.parse(text)) as T;
  }

  async *watch<T = Record<string, any>>(path: string, query: Record<string, string | number | boolean | undefined>, signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    const request: ClusterRequest = { method: "GET", path, query: { ...query, watch: true }, signal };
    const response = await this.send(request, undefined);
    if (!response.ok) throw apiError(response.status, await response.text(), request);
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line === "") continue;
        const event = JSON.parse(line) as WatchEvent<T>;
        if (event.type === "ERROR") {
          const status = event.object as Record<string, any>;
          throw new ClusterApiError(Number(status.code ?? 0), String(status.reason ?? ""), String(status.message ?? "watch error"), { method: "WATCH", path }, status.details);
        }
        yield event;
      }
    }
  }

  private async send(request: ClusterRequest, timeoutMs: number | undefined): Promise<Response> {
    const url = new URL(this.credentials.server + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const signals = [request.signal, timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)].filter((signal): signal is AbortSignal => signal !== undefined);
    const headers: Record<string, string> = { Accept: "application/json", "User-Agent": "minikubelet" };
    if (request.body !== undefined) headers["Content-Type"] = request.contentType ?? "application/json";
    if (this.credentials.token !== undefined) headers.Authorization = `Bearer ${this.credentials.token}`;
    const key = `${request.query?.watch ? "WATCH" : request.method} ${resourceOf(request.path)}`;
    this.requestCounts.set(key, (this.requestCounts.get(key) ?? 0) + 1);
    try {
      return await fetch(url, {
        method: request.method,
        headers,
        ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
        ...(signals.length > 0 && { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) }),
        tls: {
          ...(this.credentials.ca !== undefined && { ca: this.credentials.ca }),
          ...(this.credentials.cert !== undefined && { cert: this.credentials.cert, key: this.credentials.key }),
          rejectUnauthorized: !this.credentials.insecure,
        },
      } as RequestInit);
    } catch (error) {
      if (request.signal?.aborted) throw error;
      const cause = error as Error;
      const timedOut = cause.name === "TimeoutError";
      throw new ClusterApiError(0, timedOut ? "Timeout" : "ServiceUnavailable", timedOut ? `${request.method} ${url.pathname}: no answer within ${timeoutMs} ms` : `${request.method} ${url.pathname}: ${cause.message}`, { method: request.method, path: request.path });
    }
  }
}

/** `pods`, `pods/status`, `leases`: the path's resource (and subresource), for counts and messages. */
export function resourceOf(path: string): string {
  const parts = path.split("/").filter(Boolean);
  // /api/v1/... or /apis/GROUP/VERSION/...
  let rest = parts[0] === "api" ? parts.slice(2) : parts.slice(3);
  if (rest[0] === "namespaces" && rest.length > 2) rest = rest.slice(2);
  return rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? "");
}

function apiError(code: number, text: string, request: ClusterRequest): ClusterApiError {
  let status: Record<string, any> = {};
  try {
    status = JSON.parse(text);
  } catch {
    // Not a Status: keep the text.
  }
  const message = typeof status.message === "string" ? status.message : text.trim() || `HTTP ${code}`;
  return new ClusterApiError(code, typeof status.reason === "string" ? status.reason : "", message, { method: request.method, path: request.path }, status.details);
}
