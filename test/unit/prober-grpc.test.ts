/**
 * grpc probes against a real gRPC health server on 127.0.0.1 started here, with the kubelet's
 * messages. Deadlines run on a FakeClock: the test steps it once the probe is where it should be.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import net from "node:net";
import type { Probe } from "../../src/manifest/types.ts";
import { SERVING_STATUS } from "../../src/prober/grpc-health.ts";
import { Prober, type ProbeResult } from "../../src/prober/prober.ts";
import { KUBE_MINOR_VERSION } from "../../src/version.ts";
import { FakeClock } from "../fake-clock.ts";
import { bindLoopback, startGrpcHealthServer, type GrpcHealthServer } from "../grpc-health-server.ts";

let health: GrpcHealthServer;
/** A gRPC server that serves nothing: every method is Unimplemented. */
let bare: grpc.Server;
let barePort = 0;
let closedPort = 0;

beforeAll(async () => {
  health = await startGrpcHealthServer({ "": SERVING_STATUS.SERVING, db: SERVING_STATUS.NOT_SERVING, odd: 7 });
  health.hang.add("slow");
  bare = new grpc.Server();
  barePort = await bindLoopback(bare);
  const closed = net.createServer();
  closedPort = await new Promise<number>((resolve) => closed.listen(0, "127.0.0.1", () => resolve((closed.address() as net.AddressInfo).port)));
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(async () => {
  await health.close();
  bare.forceShutdown();
});

function grpcProbe(port: number, service = "", timeoutSeconds = 1): Probe {
  return { handler: { type: "grpc", port, service }, initialDelaySeconds: 0, timeoutSeconds, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
}

const target = { containerId: "c1", podIP: "127.0.0.1", kind: "liveness" as const };
const noExec = () => Promise.reject(new Error("no exec in this test"));

function run(probe: Probe, clock = new FakeClock()): Promise<ProbeResult> {
  return new Prober({ clock, exec: noExec }).probe(probe, target);
}

/** Real time for the network to do its part while the fake clock stands still. */
function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe("grpc probes", () => {
  test("SERVING is success; the request carries the service and the kubelet's user agent", async () => {
    const from = health.seen.length;
    expect(await run(grpcProbe(health.port))).toEqual({ ok: true, message: "service healthy" });
    const seen = health.seen.slice(from);
    expect(seen.map((s) => s.service)).toEqual([""]);
    expect(seen[0]!.userAgent).toStartWith(`kube-probe/${KUBE_MINOR_VERSION} `);
  });

  test("NOT_SERVING fails with the status the server named", async () => {
    expect(await run(grpcProbe(health.port, "db"))).toEqual({ ok: false, message: 'service unhealthy (responded with "NOT_SERVING")' });
  });

  test("a status the protocol does not name is printed as its number, as Go's String() does", async () => {
    expect(await run(grpcProbe(health.port, "odd"))).toEqual({ ok: false, message: 'service unhealthy (responded with "7")' });
  });

  test("an unknown service fails with the server's status error in Go's words", async () => {
    expect(await run(grpcProbe(health.port, "cache"))).toEqual({
      ok: false,
      message: "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service",
    });
  });

  test("a server without the health service fails as not implementing the protocol", async () => {
    const result = await run(grpcProbe(barePort));
    expect(result.ok).toBe(false);
    expect(result.message).toStartWith("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ");
  });

  test("a call not answered by the timeout fails, and the server sees it cancelled", async () => {
    const clock = new FakeClock();
    const arrived = health.arrived("slow");
    let settled: ProbeResult | undefined;
    const pending = run(grpcProbe(health.port, "slow", 5), clock).then((r) => (settled = r));
    await arrived;
    clock.step(4999);
    await realDelay(20);
    expect(settled).toBeUndefined();
    clock.step(1);
    expect(await pending).toEqual({ ok: false, message: "timeout: health rpc did not complete within 5s" });
    await realDelay(50);
    expect(health.seen.filter((s) => s.service === "slow").map((s) => s.cancelled)).toEqual([true]);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("a refused port is retried until the deadline, then fails as a connect timeout", async () => {
    const clock = new FakeClock();
    let settled: ProbeResult | undefined;
    const pending = run(grpcProbe(closedPort, "", 3), clock).then((r) => (settled = r));
    // Long enough for the refused connect to come back: it does not end the probe early.
    await realDelay(200);
    expect(settled).toBeUndefined();
    clock.step(3000);
    expect(await pending).toEqual({
      ok: false,
      message: `timeout: failed to connect service "127.0.0.1:${closedPort}" within 3s: context deadline exceeded`,
    });
  });
});
