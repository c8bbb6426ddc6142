/**
 * Puts the API together for `run` and `serve`: the credentials next to the database, a read-only
 * connection of its own (the loop never waits on an API read), the routes, and the listener. The
 * address it listens on is recorded for `minikubelet kubeconfig`.
 */
import type { DiskPressureCondition } from "../eviction/disk-pressure.ts";
import { isIP } from "node:net";
import { DEFAULT_API_LISTEN } from "./http/listen-address.ts";
import { realClock, type Clock } from "../clock.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { AGENT_BUSY_TIMEOUT_MS, openReadonlyDatabase } from "../store/open.ts";
import { StoreReader } from "../store/queries.ts";
import type { PlegHealth } from "../pleg/pleg.ts";
import type { MetricsSource } from "../stats/stats-source.ts";
import { DEFAULT_LIMITS, type ApiContext, type ApiLimits, type KubeletEndpoint, type CommitFeed, type PodWrites } from "./http/context.ts";
import { apiRoutes } from "./routes.ts";
import { PUBLIC_INFO_PATHS, startApiServer, type ListenAddress } from "./http/server.ts";
import { apiDirOf, ensureCredentials, recordServerAddress } from "./http/tls.ts";
import { apiGate } from "./http/api-gate.ts";
import { TokenAuthority } from "./http/service-account-tokens.ts";

export { DEFAULT_API_LISTEN };

/** `--api-listen`: `HOST:PORT` (`[::1]:6443` for IPv6), or `off`. Returns an error message for a bad value. */
export function parseListenAddress(value: string, flag = "--api-listen"): ListenAddress | "off" | { error: string } {
  if (value === "off") return "off";
  const match = /^(?:\[([^\]]+)\]|([^:\[\]]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  const hostname = match?.[1] ?? match?.[2] ?? "";
  if (!match || port > 65535) return { error: `${flag} must be HOST:PORT or off (got ${JSON.stringify(value)})` };
  if (match[1] !== undefined && isIP(hostname) !== 6) return { error: `${flag}: ${hostname} in brackets is not an IPv6 address` };
  return { hostname, port };
}

export interface StartApiOptions {
  dbPath: string;
  listen: ListenAddress;
  nodeName: string;
  commits: CommitFeed;
  runtime?: Runtime;
  /** Under `run`: pods may be created and deleted through the API. */
  podWrites?: PodWrites;
  clock?: Clock;
  limits?: ApiLimits;
  log?: (message: string) => void;
  /** `run --max-pods`: the pods the node admits, which its Node object reports. Default: the kubelet's 110. */
  maxPods?: number;
  /** Under `run`: the PLEG's health, for the Node's Ready condition. */
  plegHealth?: () => PlegHealth;
  /** Under `run`: the stats collector, for metrics.k8s.io. */
  metrics?: MetricsSource;
  /** Under `run`: the kubelet's own server once it listens, for the Node's port and the node proxy. */
  kubelet?: () => KubeletEndpoint | undefined;
  /** Under `run`: DiskPressure as the agent holds it, written to the database or not yet. */
  diskPressure?: () => DiskPressureCondition | undefined;
}

export interface RunningApi {
  url: string;
  /** The CA that signs the API's serving certificate: what a client in a pod trusts (kube-root-ca.crt). */
  caPem: string;
  /** Under `run`: the signer of ServiceAccount tokens, for the loop's pods. */
  tokens?: TokenAuthority;
  /** The API's own read-only store, for the revision checks of `serve`. */
  store: StoreReader;
  stop(): Promise<void>;
}

/** Starts listening; throws (EADDRINUSE and the like) with nothing left open. */
export function startApi(options: StartApiOptions): RunningApi {
  // The database first: a wrong --db must not leave a credentials directory beside nothing.
  const db = openReadonlyDatabase(options.dbPath);
  // Under `run` the API shares the loop's thread: a read must fail fast rather than wait on a lock.
  db.run(`PRAGMA busy_timeout = ${AGENT_BUSY_TIMEOUT_MS}`);
  let credentials;
  try {
    credentials = ensureCredentials(options.dbPath, options.listen.hostname);
  } catch (error) {
    db.close();
    throw new Error(`cannot write the API's certificates and token in ${apiDirOf(options.dbPath)}: ${(error as Error).message}`);
  }
  const store = new StoreReader(db);
  const clock = options.clock ?? realClock;
  // Under `run` only: `serve` has no loop whose pods would hold the tokens.
  const tokens = options.podWrites ? new TokenAuthority(credentials.dir, clock) : undefined;
  const context: ApiContext = {
    store,
    dbPath: options.dbPath,
    clock,
    nodeName: options.nodeName,
    runtime: options.runtime,
    commits: options.commits,
    ...(options.podWrites && { podWrites: options.podWrites }),
    limits: options.limits ?? DEFAULT_LIMITS,
    ...(options.maxPods !== undefined && { maxPods: options.maxPods }),
    ...(options.plegHealth && { plegHealth: options.plegHealth }),
    ...(options.metrics && { metrics: options.metrics }),
    ...(options.kubelet && { kubelet: options.kubelet }),
    ...(options.diskPressure && { diskPressure: options.diskPressure }),
    ...(tokens && { tokens }),
    rootCa: credentials.caPem,
  };
  try {
    const gate = apiGate({ adminToken: credentials.token, publicPaths: PUBLIC_INFO_PATHS, store, ...(tokens && { tokens }) });
    const server = startApiServer({ listen: options.listen, context, routes: apiRoutes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, publicPaths: PUBLIC_INFO_PATHS, gate, log: options.log });
    recordServerAddress(options.dbPath, clientUrl(server.url, options.listen));
    return {
      url: server.url,
      store,
      caPem: credentials.caPem,
      ...(tokens && { tokens }),
      async stop() {
        await server.stop();
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/** What a client dials: a wildcard listen address is reached on loopback, which the certificate names. */
function clientUrl(url: string, listen: ListenAddress): string {
  const port = new URL(url).port;
  if (listen.hostname === "0.0.0.0") return `https://127.0.0.1:${port}`;
  if (listen.hostname === "::") return `https://[::1]:${port}`;
  return url;
}
