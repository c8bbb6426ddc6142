/**
 * The kubelet's server for `run --kubelet-listen`: the API's listener (server.ts: TLS, the bearer
 * token, bounds) with the kubelet's routes, the API's certificate and token, and a read-only
 * connection of its own for container logs. In node mode (`serving`) it serves the node's own
 * certificate and lets in whom the cluster says (auth/kubelet-auth.ts) instead of the token. The node proxy of the API reaches the same routes in
 * process (`proxy`), as the API server reaches a node's kubelet.
 */
import type { ApiContext, CommitFeed, KubeletEndpoint } from "../api/http/context.ts";
import { DEFAULT_LIMITS } from "../api/http/context.ts";
import type { ApiRequest } from "../api/http/http.ts";
import { compileRoutes, startApiServer, type ListenAddress, type RequestGate } from "../api/http/server.ts";
import { ApiError, statusResponse } from "../api/http/status.ts";
import { apiDirOf, ensureCredentials } from "../api/http/tls.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { AGENT_BUSY_TIMEOUT_MS, openReadonlyDatabase } from "../store/open.ts";
import { StoreReader } from "../store/queries.ts";
import { kubeletRoutes, type KubeletServerDeps } from "./routes.ts";

export interface StartKubeletServerOptions extends KubeletServerDeps {
  dbPath: string;
  listen: ListenAddress;
  nodeName: string;
  commits: CommitFeed;
  runtime: Runtime;
  log?: (message: string) => void;
  /** Connections open at once (the agent's share of the open-files limit); default DEFAULT_LIMITS'. */
  maxConnections?: number;
  /** How the port is served in node mode; absent, with the agent's own certificate and token. */
  serving?: KubeletServing;
}

export interface KubeletServing {
  /** PEM of the serving certificate and key (`--tls-cert-file`, `--tls-private-key-file`); absent, the agent's self-signed ones. */
  tls?: { cert: string; key: string };
  /** PEM of the CA whose client certificates name their user (`--client-ca-file`); absent, only bearer tokens authenticate. */
  clientCa?: string;
  /** Who is served (authentication and authorization), in place of the agent's token. */
  gate: RequestGate;
}

export interface RunningKubeletServer extends KubeletEndpoint {
  url: string;
  stop(): Promise<void>;
}

/** Starts listening; throws (EADDRINUSE and the like) with nothing left open. */
export function startKubeletServer(options: StartKubeletServerOptions): RunningKubeletServer {
  const db = openReadonlyDatabase(options.dbPath);
  // The loop's thread: a log read must fail fast rather than wait on the loop's write lock.
  db.run(`PRAGMA busy_timeout = ${AGENT_BUSY_TIMEOUT_MS}`);
  try {
    let credentials;
    try {
      credentials = ensureCredentials(options.dbPath, options.listen.hostname);
    } catch (error) {
      throw new Error(`cannot write the certificates and token in ${apiDirOf(options.dbPath)}: ${(error as Error).message}`);
    }
    const context: ApiContext = { store: new StoreReader(db), dbPath: options.dbPath, clock: options.clock, nodeName: options.nodeName, runtime: options.runtime, commits: options.commits, limits: { ...DEFAULT_LIMITS, maxConnections: options.maxConnections ?? DEFAULT_LIMITS.maxConnections } };
    const routes = kubeletRoutes(options);
    const table = compileRoutes(routes);
    const { serving } = options;
    const tls = serving?.tls ?? { cert: credentials.certPem, key: credentials.keyPem };
    const auth = serving && { gate: serving.gate, ...(serving.clientCa !== undefined && { clientCa: serving.clientCa }) };
    const server = startApiServer({ listen: options.listen, context, routes, tls, token: credentials.token, ...auth, log: options.log, http2: true });
    return {
      url: server.url,
      port: Number(new URL(server.url).port),
      async proxy(path, request) {
        const url = new URL(`https://kubelet${path}`);
        for (const [name, value] of request.query) url.searchParams.append(name, value);
        const found = table.find(url.pathname, "GET");
        if (found === "no-path" || found === "no-method") return statusResponse(new ApiError(404, "NotFound", "the server could not find the requested resource", {}));
        const proxied: ApiRequest = {
          method: "GET",
          url,
          headers: request.headers,
          params: found.params,
          query: url.searchParams,
          signal: request.signal,
          body: async () => new Uint8Array(),
          upgrade: () => statusResponse(ApiError.badRequest("the node proxy does not upgrade connections")),
        };
        try {
          return await found.route.handle(proxied, context);
        } catch (error) {
          if (error instanceof ApiError) return statusResponse(error);
          return statusResponse(ApiError.internal((error as Error)?.message ?? String(error)));
        }
      },
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
