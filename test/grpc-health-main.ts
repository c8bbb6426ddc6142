/**
 * A container's gRPC health server for real-runtime tests: `bun test/grpc-health-main.ts PORT`
 * serves grpc.health.v1 on 127.0.0.1:PORT, SERVING for the whole server (service ""), until killed.
 */
import { SERVING_STATUS } from "../src/prober/grpc-health.ts";
import { startGrpcHealthServer } from "./grpc-health-server.ts";

const port = Number(process.argv[2]);
await startGrpcHealthServer({ "": SERVING_STATUS.SERVING }, port);
console.log(`serving grpc health on 127.0.0.1:${port}`);
