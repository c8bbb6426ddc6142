/**
 * An app container not yet created waits as PodInitializing in a pod with init containers and as
 * ContainerCreating in one without, the default waiting state of the kubelet's
 * convertToAPIContainerStatuses.
 */
import { expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

test("an app container behind a running init container waits as PodInitializing", async () => {
  const h = harness();
  h.runtime.behaviours.set("slow", { exitAfterMs: 10_000, exitCode: 0 });
  const web = pod({ init: [container("slow")], containers: [container("web")] });
  await h.kubelet.sync(desired(web));
  await h.advance(1);
  expect(servedPod(h.pod(web.key)!, { runtimeName: "fake" }).status!.containerStatuses![0]!.state).toEqual({ waiting: { reason: "PodInitializing" } });
});

test("an app container behind a failed init container of a Never pod still waits as PodInitializing", async () => {
  const h = harness();
  h.runtime.behaviours.set("bad", { exitAfterMs: 100, exitCode: 1 });
  const web = pod({ restartPolicy: "Never", init: [container("bad")], containers: [container("web")] });
  await h.kubelet.sync(desired(web));
  await h.advance(2);
  expect(servedPod(h.pod(web.key)!, { runtimeName: "fake" }).status!.containerStatuses![0]!.state).toEqual({ waiting: { reason: "PodInitializing" } });
});
