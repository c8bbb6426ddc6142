/**
 * /metrics follows the loop: the loop, the prober and the PLEG record into the kubelet server's
 * registry as things happen (fake runtime, fake clock), and the running gauges read the loop's
 * records when scraped.
 */
import { expect, test } from "bun:test";
import { EventedPleg } from "../../src/pleg/evented-pleg.ts";
import { ClusterClient } from "../../src/node/cluster-client.ts";
import { KubeletMetrics } from "../../src/server/metrics.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakeRuntime } from "../fake-runtime.ts";
import { harness } from "../kubelet-harness.ts";
import { sample } from "../metrics-text.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import type { Kubelet } from "../../src/kubelet/kubelet.ts";

function setup() {
  const holder: { kubelet?: Kubelet } = {};
  const metrics = new KubeletMetrics({ pods: () => holder.kubelet?.pods.values() ?? [] });
  let prober!: ScriptedProber;
  const h = harness({ metrics: metrics.recorder, probeRunner: (runtime, clock) => (prober = new ScriptedProber(runtime, clock)) });
  holder.kubelet = h.kubelet;
  return { h, metrics, prober: () => prober, scrape: () => metrics.registry.metrics(), probes: () => metrics.probes.metrics() };
}

test("running pods and containers, container starts and their errors, pod starts and pod worker passes follow the loop", async () => {
  const t = setup();
  t.h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  t.h.runtime.behaviours.set("broken", { startError: "exec: no such file" });
  const web = pod({ name: "web" });
  const crash = pod({ name: "crash" });
  const broken = pod({ name: "broken" });
  await t.h.kubelet.sync(desired(web, crash, broken));
  let text = await t.scrape();
  expect(sample(text, "kubelet_running_pods")).toBe(3);
  expect(sample(text, 'kubelet_running_containers{container_state="running"}')).toBe(2);
  expect(sample(text, 'kubelet_pod_worker_duration_seconds_count{operation_type="create"}')).toBe(3);
  const running = () => [...t.h.kubelet.pods.values()].filter((record) => record.phase === "Running").length;
  expect(running()).toBeGreaterThanOrEqual(2);
  expect(sample(text, "kubelet_pod_start_duration_seconds_count")).toBe(running());

  await t.h.advance(1.5);
  text = await t.scrape();
  const failedStarts = t.h.events.filter((event) => event.reason === "Failed" && event.container === "broken").length;
  expect(failedStarts).toBeGreaterThan(0);
  expect(t.h.runtime.startsOf("crash")).toBe(2);
  expect(sample(text, 'kubelet_started_containers_total{container_type="container"}')).toBe(t.h.runtime.startsOf("web") + t.h.runtime.startsOf("crash") + failedStarts);
  expect(sample(text, 'kubelet_started_containers_errors_total{container_type="container",code="Unknown"}')).toBe(failedStarts);
  expect(sample(text, 'kubelet_pod_worker_duration_seconds_count{operation_type="sync"}')).toBeGreaterThan(0);
  // A pod whose phase stayed Running through the crash did not start again.
  expect(sample(text, "kubelet_pod_start_duration_seconds_count")).toBe(running());

  // Crash now waits out its back-off: it no longer runs; its exited container, and the one kept before it, are counted so.
  await t.h.advance(1);
  text = await t.scrape();
  expect(sample(text, 'kubelet_running_containers{container_state="running"}')).toBe(1);
  expect(sample(text, 'kubelet_running_containers{container_state="exited"}')).toBe(2);

  await t.h.kubelet.sync(desired(web));
  await t.h.advance(35);
  text = await t.scrape();
  expect(sample(text, "kubelet_running_pods")).toBe(1);
  expect(sample(text, 'kubelet_pod_worker_duration_seconds_count{operation_type="kill"}')).toBeGreaterThan(0);
});

test("a pod stopped and started again under the same uid is a restarted pod, static when it came from a file", async () => {
  const t = setup();
  t.h.runtime.behaviours.set("web", { termDelayMs: 5000 });
  const web = pod({ name: "web" });
  await t.h.kubelet.sync(desired(web));
  // The file removed, and back while its pod still stops: the same pod (same uid) starts again once stopped.
  await t.h.kubelet.sync(desired());
  await t.h.advance(1);
  expect(sample(await t.scrape(), 'kubelet_restarted_pods_total{static="true"}')).toBeUndefined();
  await t.h.kubelet.sync(desired(web));
  await t.h.advance(10);
  expect(t.h.runtime.startsOf("web")).toBe(2);
  expect(sample(await t.scrape(), 'kubelet_restarted_pods_total{static="true"}')).toBe(1);
});

test("each probe run is counted by type and result with the pod's labels, and timed", async () => {
  const t = setup();
  const web = pod({ name: "web", containers: [container("web", { readinessProbe: probe({ type: "exec", command: ["check"] }, { periodSeconds: 1 }) })] });
  await t.h.kubelet.sync(desired(web));
  await t.h.advance(2.5);
  t.prober().scripts.set("web/readiness", () => ({ ok: false, durationMs: 200 }));
  await t.h.advance(2);
  const runs = t.prober().calls.filter((call) => call.key === "web/readiness").length;
  const labels = (result: string) => `{probe_type="Readiness",result="${result}",container="web",pod="web-lab",namespace="demo",pod_uid="uid-web-1"}`;
  const text = await t.probes();
  const successful = sample(text, `prober_probe_total${labels("successful")}`)!;
  const failed = sample(text, `prober_probe_total${labels("failed")}`)!;
  expect(successful).toBeGreaterThan(0);
  expect(failed).toBeGreaterThan(0);
  // Every settled run, no more: a run still in flight at the end is not counted yet.
  expect(successful + failed).toBeGreaterThanOrEqual(runs - 1);
  expect(successful + failed).toBeLessThanOrEqual(runs);
  expect(sample(text, 'prober_probe_duration_seconds_sum{probe_type="Readiness",container="web",pod="web-lab",namespace="demo"}')).toBeCloseTo(failed * 0.2, 5);
  // The probes' figures are /metrics/probes', not /metrics'.
  expect(await t.scrape()).not.toContain("prober_probe_total");
});

test("each PLEG relist is timed, and the interval since the one before", async () => {
  const clock = new FakeClock();
  const metrics = new KubeletMetrics({ pods: () => [] });
  const runtime = new FakeRuntime(clock);
  const pleg = new EventedPleg({ runtime: { watch: runtime.watch.bind(runtime), listContainers: runtime.listContainers.bind(runtime), listPodSandboxes: runtime.listPodSandboxes.bind(runtime) }, clock, metrics: metrics.recorder });
  await pleg.relist();
  clock.step(7_000);
  await pleg.relist();
  clock.step(3_000);
  await pleg.relist();
  const text = await metrics.registry.metrics();
  expect(sample(text, "kubelet_pleg_relist_duration_seconds_count")).toBe(3);
  expect(sample(text, "kubelet_pleg_relist_interval_seconds_count")).toBe(2);
  expect(sample(text, "kubelet_pleg_relist_interval_seconds_sum")).toBe(10);
  expect(sample(text, 'kubelet_pleg_relist_interval_seconds_bucket{le="5"}')).toBe(1);
});

test("node mode's requests to the API server are counted on /metrics by verb and resource, as the client sent them", async () => {
  await using server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({}) });
  const client = new ClusterClient({ file: "test", server: `http://127.0.0.1:${server.port}`, insecure: false });
  const metrics = new KubeletMetrics({ pods: () => [] });
  metrics.countClusterRequests(client.requestCounts);
  expect(await metrics.registry.metrics()).not.toContain("minikubelet_cluster_requests_total{");
  await client.request({ method: "PUT", path: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", body: {} });
  await client.request({ method: "PUT", path: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", body: {} });
  await client.request({ method: "PATCH", path: "/api/v1/namespaces/default/pods/web/status", body: {} });
  const text = await metrics.registry.metrics();
  expect(sample(text, 'minikubelet_cluster_requests_total{verb="PUT",resource="leases"}')).toBe(2);
  expect(sample(text, 'minikubelet_cluster_requests_total{verb="PATCH",resource="pods/status"}')).toBe(1);
});
