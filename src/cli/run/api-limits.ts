/** `run`'s bounds on its API: the kube-apiserver's flag names and defaults where it has the limit. */
import { DEFAULT_LIMITS, type ApiLimits } from "../../api/http/context.ts";
import { parseGoDuration } from "../../printers/go-duration.ts";
import { UsageError } from "../errors.ts";

export interface ApiLimitFlags {
  maxRequestsInflight?: unknown;
  maxMutatingRequestsInflight?: unknown;
  requestTimeout?: unknown;
  minRequestTimeout?: unknown;
  maxStreamsPerClient?: unknown;
  tlsHandshakeTimeout?: unknown;
  readHeaderTimeout?: unknown;
  maxConnections?: unknown;
}

/** Every flag checked, each refusal naming the flag and the value. */
export function apiLimitsOption(flags: ApiLimitFlags): ApiLimits {
  return {
    ...DEFAULT_LIMITS,
    // The API server's "zero for no limit".
    maxRequestsInflight: count("--max-requests-inflight", flags.maxRequestsInflight, DEFAULT_LIMITS.maxRequestsInflight, true),
    maxMutatingRequestsInflight: count("--max-mutating-requests-inflight", flags.maxMutatingRequestsInflight, DEFAULT_LIMITS.maxMutatingRequestsInflight, true),
    requestTimeoutMs: duration("--request-timeout", flags.requestTimeout, DEFAULT_LIMITS.requestTimeoutMs),
    minRequestTimeoutSeconds: count("--min-request-timeout", flags.minRequestTimeout, DEFAULT_LIMITS.minRequestTimeoutSeconds, false),
    maxStreamsPerClient: count("--max-streams-per-client", flags.maxStreamsPerClient, DEFAULT_LIMITS.maxStreamsPerClient, false),
    tlsHandshakeTimeoutMs: duration("--tls-handshake-timeout", flags.tlsHandshakeTimeout, DEFAULT_LIMITS.tlsHandshakeTimeoutMs),
    readHeaderTimeoutMs: duration("--read-header-timeout", flags.readHeaderTimeout, DEFAULT_LIMITS.readHeaderTimeoutMs),
    maxConnections: count("--max-connections", flags.maxConnections, DEFAULT_LIMITS.maxConnections, false),
  };
}

function count(flag: string, value: unknown, fallback: number, zeroIsNoLimit: boolean): number {
  if (value === undefined) return fallback;
  const n = typeof value === "number" ? value : Number(value);
  if (zeroIsNoLimit && n === 0) return Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number above 0${zeroIsNoLimit ? ", or 0 for no limit" : ""} (got ${JSON.stringify(value)})`);
  return n;
}

function duration(flag: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  // cac reads `30` as a number: seconds, as a bare number means everywhere else in run's flags.
  const ms = typeof value === "number" ? value * 1000 : parseGoDuration(String(value));
  if (ms === undefined || !(ms > 0)) throw new UsageError(`${flag} must be a duration above 0, such as 1m or 30s (got ${JSON.stringify(value)})`);
  return ms;
}
