/**
 * What the streaming subresources (exec, attach, port-forward) share before they take over a
 * connection: the runtime they need (absent under `serve`), a bound on sessions open at once per API server and
 * kind, the protocol offer check, and the hand-over of a SPDY upgrade. The sessions themselves are
 * each subresource's own.
 */
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, SpdySession } from "../http/http.ts";
import { ApiError, statusResponse } from "../http/status.ts";
import type { Runtime } from "../../runtime/runtime.ts";

export type StreamingKind = "exec" | "attach" | "port-forward";

/** The agent's runtime; under `serve` (none) a 503 naming `kind`, the same Status for every kind. */
export function requireRuntime(api: ApiContext, kind: StreamingKind): Runtime {
  if (api.runtime) return api.runtime;
  throw new ApiError(503, "ServiceUnavailable", `${kind} needs the running agent: \`minikubelet serve\` only reads the database (start the pods with \`minikubelet run\`)`);
}

/** Sessions open per API server (its context) and kind. */
const openSessions = new WeakMap<ApiContext, Map<StreamingKind, number>>();

/**
 * Takes one of `limit` session slots of `kind`: returns the (idempotent) release to call when the
 * session is over, or, with every slot taken, the 429 to answer (kubectl prints its message).
 */
export function takeSessionSlot(api: ApiContext, kind: StreamingKind, limit: number): (() => void) | Response {
  const counts = openSessions.get(api) ?? new Map<StreamingKind, number>();
  openSessions.set(api, counts);
  if ((counts.get(kind) ?? 0) >= limit) {
    return statusResponse(new ApiError(429, "TooManyRequests", `too many ${kind} sessions open (limit ${limit}); try again later`, { retryAfterSeconds: 1 }));
  }
  counts.set(kind, (counts.get(kind) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    counts.set(kind, (counts.get(kind) ?? 1) - 1);
  };
}

/** The sessions of `kind` open now on this API server: what the slots count. */
export function openSessionCount(api: ApiContext, kind: StreamingKind): number {
  return openSessions.get(api)?.get(kind) ?? 0;
}

/** Whether a comma-separated protocol offer (`X-Stream-Protocol-Version`, `Sec-WebSocket-Protocol`) names `protocol`. */
export function offersProtocol(offer: string | null, protocol: string): boolean {
  return (offer ?? "").split(",").some((offered) => offered.trim() === protocol);
}

/** Hands the connection to `session` over SPDY/3.1; the answer to send when it cannot be (undefined once upgraded). */
export function upgradeSpdy(request: ApiRequest, session: SpdySession): Response | undefined {
  if (!request.upgradeSpdy) return statusResponse(ApiError.badRequest("this server does not serve SPDY upgrades"));
  return request.upgradeSpdy(session);
}
