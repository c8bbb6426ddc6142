/**
 * `limit` and `continue` for list requests. The token is what the API server's is: base64 of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"}`, resuming after the last key served. Items
 * come from the database in key order, so a page resumes where the previous one ended even when
 * the list changed between pages (as on the API server once its snapshot is compacted).
 */
import type { ApiLimits } from "./context.ts";
import { ApiError } from "./status.ts";

export interface Page<T> {
  items: T[];
  /** Set when more items follow: the `continue` the next request passes. */
  continueToken?: string;
  remainingItemCount?: number;
}

export interface PageRequest {
  limit: number | undefined;
  /** Only items whose key sorts after this. */
  after: string | undefined;
}

/** Reads `limit` and `continue`; a bad one is a 400 naming it. */
export function pageRequest(query: URLSearchParams, limits: ApiLimits): PageRequest {
  const rawLimit = query.get("limit");
  let limit: number | undefined;
  if (rawLimit !== null && rawLimit !== "") {
    if (!/^-?\d+$/.test(rawLimit)) throw ApiError.badRequest(`limit: Invalid value: "${rawLimit}": must be an integer`);
    const parsed = Number(rawLimit);
    if (parsed > limits.maxListLimit) throw ApiError.badRequest(`limit: Invalid value: ${parsed}: must be at most ${limits.maxListLimit}`);
    // The API server treats zero and negative limits as no limit.
    if (parsed > 0) limit = parsed;
  }
  const token = query.get("continue");
  return { limit, after: token ? decodeContinue(token) : undefined };
}

/**
 * The revision a list is served at: the store's current one. A `resourceVersion` asks for a list
 * at least that new, so one the store has not reached is the API server's 504 "Too large resource
 * version" (kubectl retries it); one that is not a number is a 400.
 */
export function listRevision(query: URLSearchParams, current: number): number {
  const asked = query.get("resourceVersion") ?? "";
  if (asked === "" || asked === "0") return current;
  if (!/^\d+$/.test(asked)) throw ApiError.badRequest(`resourceVersion: Invalid value: ${JSON.stringify(asked)}: strconv.ParseUint: parsing ${JSON.stringify(asked)}: invalid syntax`);
  if (Number(asked) > current) {
    throw new ApiError(504, "Timeout", `Too large resource version: ${asked}, current: ${current}`, {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: 1,
    });
  }
  return current;
}

/** The page of `items` (sorted by `key`) that `request` asks for. */
export function page<T>(items: T[], key: (item: T) => string, request: PageRequest, revision: number): Page<T> {
  const after = request.after;
  const start = after === undefined ? 0 : items.findIndex((item) => key(item) > after);
  const rest = start < 0 ? [] : items.slice(start);
  if (request.limit === undefined || rest.length <= request.limit) return { items: rest };
  const served = rest.slice(0, request.limit);
  return { items: served, continueToken: encodeContinue(key(served.at(-1)!), revision), remainingItemCount: rest.length - served.length };
}

export function encodeContinue(lastKey: string, revision: number): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: revision, start: `${lastKey}\u0000` })).toString("base64url");
}

function decodeContinue(token: string): string {
  const invalid = (why: string) => ApiError.badRequest(`invalid continue token: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch (error) {
    throw invalid(`continue key is not valid: ${(error as Error).message}`);
  }
  const value = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (typeof parsed !== "object" || parsed === null || value.v !== "meta.k8s.io/v1") throw invalid("server does not recognize this encoded version");
  if (typeof value.rv !== "number" || typeof value.start !== "string" || value.start === "") throw invalid("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  return value.start.replace(/\u0000$/, "");
}
