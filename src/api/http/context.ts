/**
 * What a route may use: the state database through its own read-only connection, the clock, the
 * node, and (under `run`, not `serve`) the runtime for exec, port-forward and live logs. Nothing
 * here reaches the loop: the API reads what the loop committed, and hears each commit for its watches.
 */
import type { Clock } from "../../clock.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import type { StoreReader } from "../../store/queries.ts";
import type { PodWrites } from "../../config/pod-writes.ts";

export type { PodWrites };
import type { PlegHealth } from "../../pleg/pleg.ts";
import type { MetricsSource } from "../../stats/stats-source.ts";
import type { DiskPressureCondition } from "../../eviction/disk-pressure.ts";
import type { TokenAuthority } from "./service-account-tokens.ts";

export interface ApiContext {
  store: StoreReader;
  dbPath: string;
  clock: Clock;
  /** The node's name: `--node`, else the host name. */
  nodeName: string;
  /** The agent's runtime; absent under `serve`, where exec, port-forward and live logs are unavailable. */
  runtime?: Runtime;
  /** Told the store's revision after each commit (under `serve`, after the database file changed). */
  commits: CommitFeed;
  /** Under `run`: the agent's side of pod writes. Absent under `serve`, where writes are refused. */
  podWrites?: PodWrites;
  limits: ApiLimits;
  /** The pods the node admits (`run --max-pods`); undefined is the kubelet's default. */
  maxPods?: number;
  /** Under `run`: the PLEG's health, which the Node's Ready condition reports. */
  plegHealth?: () => PlegHealth;
  /** Under `run`: the stats collector's figures, which metrics.k8s.io serves. */
  metrics?: MetricsSource;
  /** Under `run` with `--kubelet-listen`: the kubelet's own server, which the node proxy reaches. */
  kubelet?: () => KubeletEndpoint | undefined;
  /**
   * Under `run`: DiskPressure as the agent holds it. On a full disk the database cannot take the
   * change that says so; this is the verdict the loop acts on, and the Node reports it.
   */
  diskPressure?: () => DiskPressureCondition | undefined;
  /** Under `run`: the signer of ServiceAccount tokens (TokenRequest), and their check on each request. */
  tokens?: TokenAuthority;
  /** The CA that signs the API's serving certificate, which each namespace's kube-root-ca.crt carries. */
  rootCa?: string;
}

/** The kubelet's server as the API sees it: the port its Node reports, and its handlers for the node proxy. */
export interface KubeletEndpoint {
  port: number;
  /** Serves `path` (`/stats/summary`) with `query` as the kubelet would; the API already checked the caller. */
  proxy(path: string, request: { query: URLSearchParams; headers: Headers; signal: AbortSignal }): Promise<Response>;
}

export interface CommitFeed {
  subscribe(listener: (revision: number) => void): () => void;
}

export interface ApiLimits {
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** Watches open at once; one more gets 429. */
  maxWatches: number;
  /** Exec sessions open at once, and as many attach sessions (each kind counted apart); one more gets 429. */
  maxExecSessions: number;
  /** Port-forward sessions (one per kubectl port-forward, however many connections it carries) open at once; one more gets 429. */
  maxPortForwardSessions: number;
  /** Largest `limit` a list accepts; a larger one is a 400 naming this bound. */
  maxListLimit: number;
  /** `--max-requests-inflight`: reads being served at once (long-running ones not counted); one more gets 429. */
  maxRequestsInflight: number;
  /** `--max-mutating-requests-inflight`: writes (POST, PUT, PATCH, DELETE) being served at once; one more gets 429. */
  maxMutatingRequestsInflight: number;
  /** `--request-timeout`: a request that is not long-running and has no answer by then is a 504 Timeout. */
  requestTimeoutMs: number;
  /** `--min-request-timeout`: a watch without timeoutSeconds ends after between this and twice this. */
  minRequestTimeoutSeconds: number;
  /** `--max-streams-per-client`: watches and followed logs one client address may hold open; one more gets 429. */
  maxStreamsPerClient: number;
  /** `--tls-handshake-timeout`: a connection that has not finished its TLS handshake this long after it was accepted is closed. */
  tlsHandshakeTimeoutMs: number;
  /**
   * `--read-header-timeout`: a connection whose first request head is not complete this long after
   * it was accepted is closed. A deadline, not an idle timer: a byte now and then does not extend it.
   */
  readHeaderTimeoutMs: number;
  /** `--max-connections`: connections open at once; one more is closed as it is accepted (lowered to what the descriptors allow). */
  maxConnections: number;
}

/** The API server's defaults where it has the limit (kube-apiserver --max-requests-inflight and the rest), else ours. */
export const DEFAULT_LIMITS: ApiLimits = {
  maxBodyBytes: 3 * 1024 * 1024,
  maxWatches: 100,
  maxExecSessions: 16,
  maxPortForwardSessions: 16,
  maxListLimit: 10_000,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  requestTimeoutMs: 60_000,
  minRequestTimeoutSeconds: 1800,
  maxStreamsPerClient: 100,
  tlsHandshakeTimeoutMs: 10_000,
  // The API server's ReadHeaderTimeout (secure_serving.go): just shy of its request timeout's upper bound.
  readHeaderTimeoutMs: 32_000,
  maxConnections: 4000,
};
