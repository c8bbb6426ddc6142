/**
 * Found by the docker e2e test: an agent restarting on a shared docker engine removed the containers
 * of another agent (another --node) as "nothing explains it". The node label scopes what an agent owns.
 */
import { expect, test } from "bun:test";
import { planAdoption } from "../../src/kubelet/adoption/adoption.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakeRuntime } from "../fake-runtime.ts";
import { container, desired, pod } from "../pod-builder.ts";

test("labelled containers and sandboxes of another node are neither adopted nor removed; our strays are", async () => {
  const clock = new FakeClock();
  const runtime = new FakeRuntime(clock);
  const theirs = pod({ name: "theirs", node: "other", containers: [container("theirs")] });
  const stray = pod({ name: "stray", node: "n1", containers: [container("stray")] });
  for (const spec of [theirs, stray]) {
    const sandbox = await runtime.runPodSandbox(spec);
    await runtime.startContainer({ pod: spec, container: spec.containers[0]!, kind: "app", attempt: 0, sandbox });
  }
  const plan = planAdoption({
    records: [],
    containers: await runtime.listContainers(),
    sandboxes: await runtime.listPodSandboxes(),
    desired: desired(),
    now: clock.now(),
    node: "n1",
  });
  expect(plan.orphans.map((c) => c.labels["io.kubernetes.container.name"])).toEqual(["stray"]);
  expect(plan.orphanSandboxes.map((s) => s.podUid)).toEqual([stray.uid]);
  expect(plan.pods).toEqual([]);
});
