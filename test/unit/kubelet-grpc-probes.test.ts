/**
 * A grpc liveness probe in the loop: the real Prober against a gRPC health server on 127.0.0.1,
 * scheduled by the ProbeManager on the harness's fake clock. The probe's own deadline runs on the
 * real clock here, since the fake one jumps whole seconds while the server answers in real time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realClock } from "../../src/clock.ts";
import type { ContainerSpec } from "../../src/manifest/types.ts";
import { SERVING_STATUS } from "../../src/prober/grpc-health.ts";
import type { ProbeRunner } from "../../src/prober/probe-manager.ts";
import { Prober } from "../../src/prober/prober.ts";
import { startGrpcHealthServer, type GrpcHealthServer } from "../grpc-health-server.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";

let health: GrpcHealthServer;

beforeAll(async () => {
  health = await startGrpcHealthServer({});
});

afterAll(() => health.close());

/**
 * The fake runtime's sandbox IP is not routable here: the runner records the pod IP each probe
 * was aimed at and sends it to the server on loopback, as the process runtime's pods are reached.
 */
function loopbackRunner() {
  const prober = new Prober({ clock: realClock, exec: () => Promise.reject(new Error("no exec in this test")) });
  const aimedAt: string[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const runner: ProbeRunner = {
    probe(spec, target) {
      aimedAt.push(target.podIP);
      const result = prober.probe(spec, { ...target, podIP: "127.0.0.1" });
      inFlight.add(result);
      void result.finally(() => inFlight.delete(result));
      return result;
    },
  };
  return { runner, aimedAt, inFlight };
}

function setup(service: string, place: "app" | "sidecar") {
  const { runner, aimedAt, inFlight } = loopbackRunner();
  const h = harness({ baseSeconds: 10, probeRunner: () => runner });
  const livenessProbe = probe({ type: "grpc", port: health.port, service }, { periodSeconds: 2, failureThreshold: 1 });
  const spec: Partial<ContainerSpec> = { livenessProbe };
  const web =
    place === "app"
      ? pod({ grace: 5, containers: [container("web", spec)] })
      : pod({ grace: 5, init: [container("web", { ...spec, restartPolicy: "Always" })], containers: [container("main")] });
  /** Advances whole seconds, letting each probe's real round trip finish before the next second. */
  const advance = async (seconds: number) => {
    for (let second = 0; second < seconds; second++) {
      await h.advance(1);
      while (inFlight.size > 0) {
        await Promise.all(inFlight);
        await h.advance(0);
      }
    }
  };
  return { h, web, aimedAt, advance };
}

for (const place of ["app", "sidecar"] as const) {
  describe(`a grpc liveness probe on ${place === "app" ? "an app container" : "a restartable init container"}`, () => {
    test("SERVING keeps the container; NOT_SERVING kills and restarts it with the kubelet's messages", async () => {
      const service = `svc-${place}`;
      health.statuses.set(service, SERVING_STATUS.SERVING);
      const t = setup(service, place);
      await t.h.kubelet.sync(desired(t.web));
      await t.advance(10);
      expect(t.h.runtime.startsOf("web")).toBe(1);
      expect(t.h.events.filter((e) => e.reason === "Unhealthy" || e.reason === "Killing")).toEqual([]);
      expect(health.seen.filter((s) => s.service === service).length).toBeGreaterThanOrEqual(5);
      expect(new Set(t.aimedAt)).toEqual(new Set(["10.0.0.2"]));

      health.statuses.set(service, SERVING_STATUS.NOT_SERVING);
      await t.advance(3);
      expect(t.h.events.find((e) => e.reason === "Unhealthy")!.message).toBe('Liveness probe failed: service unhealthy (responded with "NOT_SERVING")');
      expect(t.h.events.find((e) => e.reason === "Killing")!.message).toBe("Container web failed liveness probe, will be restarted");
      expect(t.h.runtime.startsOf("web")).toBe(2);
    });
  });
}
