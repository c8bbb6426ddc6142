/**
 * A gRPC health server (grpc.health.v1.Health/Check) on 127.0.0.1, for grpc probe tests: it
 * answers each service with the status `statuses` holds for it now, NotFound "unknown service" for
 * a service it does not know (as grpc-go's health server does), and never answers a service listed
 * in `hang`. Each request is recorded with its user agent.
 */
import * as grpc from "@grpc/grpc-js";
import {
  decodeHealthCheckRequest,
  encodeHealthCheckResponse,
  HEALTH_CHECK_METHOD,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from "../src/prober/grpc-health.ts";

export interface SeenCheck {
  service: string;
  userAgent: string;
  /** Set when the client cancelled the call (a probe past its deadline). */
  cancelled: boolean;
}

export interface GrpcHealthServer {
  port: number;
  statuses: Map<string, number>;
  hang: Set<string>;
  seen: SeenCheck[];
  /** Resolves when the next call for `service` arrives (ask before starting the probe). */
  arrived(service: string): Promise<void>;
  close(): Promise<void>;
}

const CHECK: grpc.ServiceDefinition = {
  Check: {
    path: HEALTH_CHECK_METHOD,
    requestStream: false,
    responseStream: false,
    requestSerialize: () => Buffer.alloc(0),
    requestDeserialize: decodeHealthCheckRequest,
    responseSerialize: encodeHealthCheckResponse,
    responseDeserialize: () => ({}),
  },
};

/** Binds `server` to `port` on 127.0.0.1 (0: a free one), resolving with the port bound. */
export function bindLoopback(server: grpc.Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port))),
  );
}

export async function startGrpcHealthServer(statuses: Record<string, number>, port = 0): Promise<GrpcHealthServer> {
  const server = new grpc.Server();
  const state = { statuses: new Map(Object.entries(statuses)), hang: new Set<string>(), seen: [] as SeenCheck[] };
  const waiters: Array<{ service: string; resolve: () => void }> = [];
  server.addService(CHECK, {
    Check: (call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: grpc.sendUnaryData<HealthCheckResponse>) => {
      const { service } = call.request;
      const seen: SeenCheck = { service, userAgent: String(call.metadata.get("user-agent")[0] ?? ""), cancelled: false };
      state.seen.push(seen);
      call.on("cancelled", () => (seen.cancelled = true));
      for (const waiter of waiters.filter((w) => w.service === service)) waiter.resolve();
      if (state.hang.has(service)) return;
      const status = state.statuses.get(service);
      if (status === undefined) return callback({ code: grpc.status.NOT_FOUND, details: "unknown service" });
      callback(null, { status });
    },
  });
  const bound = await bindLoopback(server, port);
  return {
    port: bound,
    ...state,
    arrived: (service) => new Promise((resolve) => waiters.push({ service, resolve })),
    close: async () => server.forceShutdown(),
  };
}
