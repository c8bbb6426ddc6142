/**
 * What a route may use: the state database through its own read-only connection, the clock, the
 * node, and (under `run`, not `serve`) the runtime for exec and live logs. Nothing here reaches the
 * loop: the API reads what the loop committed, and hears each commit for its watches.
 */
import type { Clock } from "../clock.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { StoreReader } from "../store/queries.ts";
import type { ApiPodStore } from "../store/api-pod-store.ts";
import type { AdmittedPod } from "../manifest/admit.ts";

export interface ApiContext {
  store: StoreReader;
  dbPath: string;
  clock: Clock;
  /** The node's name: `--node`, else the host name. */
  nodeName: string;
  /** The agent's runtime; absent under `serve`, where exec and live logs are unavailable. */
  runtime?: Runtime;
  /** Told the store's revision after each commit (under `serve`, after the database file changed). */
  commits: CommitFeed;
  /** Under `run`: the agent's side of pod writes. Absent under `serve`, where writes are refused. */
  podWrites?: PodWrites;
  limits: ApiLimits;
  /** The pods the node admits (`run --max-pods`); undefined is the kubelet's default. */
  maxPods?: number;
}

export interface CommitFeed {
  subscribe(listener: (revision: number) => void): () => void;
}

export interface ApiLimits {
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** Watches open at once; one more gets 429. */
  maxWatches: number;
  /** Exec sessions open at once; one more gets 429. */
  maxExecSessions: number;
  /** Largest `limit` a list accepts; a larger one is a 400 naming this bound. */
  maxListLimit: number;
}

export const DEFAULT_LIMITS: ApiLimits = { maxBodyBytes: 3 * 1024 * 1024, maxWatches: 100, maxExecSessions: 16, maxListLimit: 10_000 };

/**
 * What the write routes use under `run`: the agent's store of API pods (its write connection), the
 * agent's admission rules, and the source to wake once a write is committed.
 */
export interface PodWrites {
  store: ApiPodStore;
  /** Admits a pod by the rules a manifest file meets on this agent (`strict`: unknown fields refused); throws ManifestError. */
  admit(object: Record<string, unknown>, identity: { uid: string; createdAt: number }, strict: boolean): AdmittedPod;
  /** The manifest file whose pod has this namespace and name (as the API names it), if any. */
  fileOf(namespace: string, name: string): string | undefined;
  /** Tells the API pod source that a write was committed: the loop wakes on it. */
  changed(): void;
}
