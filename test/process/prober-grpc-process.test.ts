/**
 * grpc liveness probes on the process runtime, as the conformance specs run them: a container
 * serving grpc.health.v1 is probed on its port at 127.0.0.1 and left running; probed on a port
 * nobody listens on, it is killed at the probe's timeout and restarted.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { ProbeManager } from "../../src/prober/probe-manager.ts";
import { Prober } from "../../src/prober/prober.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-grpc-"));
  runtime = new ProcessRuntime({ rootDir: root });
  const probes = new ProbeManager({ runner: new Prober({ clock: realClock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) }), clock: realClock });
  h = realHarness(runtime, { probes });
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

/** A port free a moment ago on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)));
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The container: this test's bun running the health server on `servePort`, liveness-probed on `probePort`. */
async function grpcServerPod(servePort: number, probePort: number) {
  const serve = [process.execPath, join(import.meta.dir, "..", "grpc-health-main.ts"), String(servePort)];
  const livenessProbe = probe({ type: "grpc", port: probePort, service: "" }, { initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 1 });
  return pod({ name: "grpc", grace: 2, containers: [container("grpc", { command: serve, livenessProbe })] });
}

test("a container answering SERVING on the probed port is not restarted", async () => {
  const port = await freePort();
  await h.kubelet.sync(desired(await grpcServerPod(port, port)));
  await h.event((e) => e.reason === "Started");
  await Bun.sleep(5000);
  expect(h.events.filter((e) => ["Unhealthy", "Killing"].includes(e.reason)).map((e) => e.message)).toEqual([]);
  expect(h.events.filter((e) => e.reason === "Started").length).toBe(1);
}, 15_000);

test("probed on a port nobody listens on, the container is killed at the timeout and restarted", async () => {
  const port = await freePort();
  const wrongPort = await freePort();
  await h.kubelet.sync(desired(await grpcServerPod(port, wrongPort)));
  const unhealthy = await h.event((e) => e.reason === "Unhealthy", 10_000);
  expect(unhealthy.message).toBe(`Liveness probe failed: timeout: failed to connect service "127.0.0.1:${wrongPort}" within 1s: context deadline exceeded`);
  const killing = await h.event((e) => e.reason === "Killing", 5_000);
  expect(killing.message).toBe("Container grpc failed liveness probe, will be restarted");
  await h.event((e) => e.reason === "Started" && h.events.filter((s) => s.reason === "Started").length === 2, 10_000);
}, 30_000);
