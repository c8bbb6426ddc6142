/**
 * The ServiceAccount tokens of the pods' projected volumes, as the kubelet's token manager
 * (pkg/kubelet/token/token_manager.go) keeps them: one per pod, ServiceAccount, audiences and
 * lifetime, requested through the source (TokenRequest bound to the pod) and requested again once
 * 80% of its requested lifetime has passed or it is 24 hours old (the API server may extend a
 * token's expiry; a day is the longest the kubelet keeps one). A token that could not be refreshed
 * is still used until it expires. The request runs beside the loop: a lookup answers at once, and
 * the pod is synced again when the token arrives (`issued`).
 */
import type { Clock } from "../../clock.ts";
import { cappedDoubling } from "../../capped-doubling.ts";
import type { Lookup, PodObjectSource, TokenRequestInput } from "../objects/pod-object-source.ts";

/** A token older than this is refreshed, whatever its expiry (maxTTL). */
export const TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** The share of the requested lifetime after which a token is refreshed. */
const REFRESH_AT_SHARE = 0.8;
const RETRY_BASE_MS = 1000;
const RETRY_CAP_MS = 60_000;

interface Entry {
  key: string;
  request: TokenRequestInput;
  token?: string;
  expiresAt?: number;
  inFlight: boolean;
  error?: string;
  failures: number;
  retryAt?: number;
}

export interface TokenAnswer {
  lookup: Lookup<string>;
  /** When this token should be looked up again (its refresh time, or the retry after a failure). */
  nextAt?: number;
}

export interface TokenCacheOptions {
  source: Pick<PodObjectSource, "serviceAccountToken">;
  clock: Clock;
  /** A request finished (a token or a failure): the pod's next pass reads it. */
  issued: (podUid: string) => void;
  log?: (message: string) => void;
}

export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly source: TokenCacheOptions["source"];
  private readonly clock: Clock;
  private readonly issued: (podUid: string) => void;
  private readonly log: (message: string) => void;

  constructor(options: TokenCacheOptions) {
    this.source = options.source;
    this.clock = options.clock;
    this.issued = options.issued;
    this.log = options.log ?? (() => {});
  }

  token(request: TokenRequestInput): TokenAnswer {
    const key = JSON.stringify([request.podUid, request.namespace, request.serviceAccount, [...request.audiences].sort(), request.expirationSeconds]);
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { key, request, inFlight: false, failures: 0 }));
    const now = this.clock.now();
    const refreshAt = entry.expiresAt === undefined ? undefined : refreshTime(entry.expiresAt, request.expirationSeconds);
    if (refreshAt !== undefined && now < refreshAt) return { lookup: { state: "found", object: entry.token! }, nextAt: refreshAt };
    if (!entry.inFlight && (entry.retryAt === undefined || now >= entry.retryAt)) this.request(entry);
    // A request in flight wakes the pod when it ends; a failed one, at its retry time.
    const nextAt = entry.inFlight ? undefined : entry.retryAt;
    // A token due for refresh stays good until it expires (the kubelet hands out the old one when a refresh fails).
    if (entry.token !== undefined && now < entry.expiresAt!) return { lookup: { state: "found", object: entry.token }, ...(nextAt !== undefined && { nextAt }) };
    const message = entry.error ?? `waiting for a token of service account ${request.namespace}/${request.serviceAccount}`;
    return { lookup: { state: "unavailable", message }, ...(nextAt !== undefined && { nextAt }) };
  }

  /** The pod is gone: its tokens are dropped (DeleteServiceAccountToken). */
  forgetPod(podUid: string): void {
    for (const [key, entry] of this.entries) if (entry.request.podUid === podUid) this.entries.delete(key);
  }

  private request(entry: Entry): void {
    entry.inFlight = true;
    const { request } = entry;
    this.source.serviceAccountToken(request).then(
      (issued) => {
        entry.token = issued.token;
        entry.expiresAt = issued.expiresAt;
        entry.failures = 0;
        delete entry.error;
        delete entry.retryAt;
      },
      (error: unknown) => {
        const message = `failed to fetch token: ${error instanceof Error ? error.message : String(error)}`;
        if (entry.error !== message) this.log(`pod ${request.namespace}/${request.podName}: ${message}`);
        entry.error = message;
        entry.retryAt = this.clock.now() + cappedDoubling(RETRY_BASE_MS, RETRY_CAP_MS, entry.failures);
        entry.failures += 1;
      },
    ).finally(() => {
      entry.inFlight = false;
      // A pod that went away meanwhile has nothing to wake.
      if (this.entries.get(entry.key) === entry) this.issued(request.podUid);
    });
  }
}

/** The moment a token expiring at `expiresAt` is due for refresh (requiresRefresh, without its jitter). */
export function refreshTime(expiresAt: number, expirationSeconds: number): number {
  const issuedAt = expiresAt - expirationSeconds * 1000;
  return Math.min(issuedAt + TOKEN_MAX_AGE_MS, issuedAt + expirationSeconds * 1000 * REFRESH_AT_SHARE);
}
