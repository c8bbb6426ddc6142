/**
 * An init container that ran to success is reported ready, as the kubelet's prober manager does
 * for a non-restartable init container (a sidecar's readiness still follows its probes).
 */
import { expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

test("a succeeded init container is ready, a failed one is not", async () => {
  const h = harness();
  h.runtime.behaviours.set("ok", { exitAfterMs: 100, exitCode: 0 });
  h.runtime.behaviours.set("bad", { exitAfterMs: 100, exitCode: 1 });
  const passes = pod({ name: "passes", init: [container("ok")], containers: [container("web")] });
  const fails = pod({ name: "fails", restartPolicy: "Never", init: [container("bad")], containers: [container("web")] });
  await h.kubelet.sync(desired(passes, fails));
  await h.advance(2);
  const initStatus = (key: string) => servedPod(h.pod(key)!, { runtimeName: "fake" }).status!.initContainerStatuses![0]!;
  expect(initStatus(passes.key)).toMatchObject({ state: { terminated: { exitCode: 0 } }, ready: true });
  expect(initStatus(fails.key)).toMatchObject({ state: { terminated: { exitCode: 1 } }, ready: false });
});

test("an init container still running is not ready", async () => {
  const h = harness();
  h.runtime.behaviours.set("slow", { exitAfterMs: 10_000, exitCode: 0 });
  const web = pod({ init: [container("slow")], containers: [container("web")] });
  await h.kubelet.sync(desired(web));
  await h.advance(1);
  expect(servedPod(h.pod(web.key)!, { runtimeName: "fake" }).status!.initContainerStatuses![0]).toMatchObject({ state: { running: {} }, ready: false });
});
