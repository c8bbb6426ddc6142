/**
 * Events the runtime sends while startContainer is still returning the id: an exit there must sync
 * the pod once the id is known (nothing else will), but a start is what the call itself reports,
 * and a second pass for it would be work on the restart path of every pod (issue 15).
 */
import { expect, test } from "bun:test";
import type { PodStateSink } from "../../src/kubelet/pod-checkpoints.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

/** A harness whose runtime reports on a new container before its start call returns, as the process runtime does. */
function eagerHarness(exitAtOnce: boolean) {
  const saved: string[] = [];
  const store: PodStateSink = { savePod: (p) => void saved.push(p.spec.key), deletePod: () => {} };
  const h = harness({ store });
  const start = h.runtime.startContainer.bind(h.runtime);
  h.runtime.startContainer = async (config) => {
    const id = await start(config);
    h.runtime.emit({ type: "started", containerId: id });
    if (exitAtOnce) h.runtime.finish(id, 1);
    return id;
  };
  return { ...h, saved };
}

test("a start reported before startContainer returns does not sync the pod a second time", async () => {
  const h = eagerHarness(false);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("app")] })));
  await h.advance(0);
  expect(h.saved).toEqual(["demo/web-lab"]);
  expect(h.pod("demo/web-lab")?.app[0]?.state).toBe("running");
});

test("an exit reported before startContainer returns syncs the pod once the id is known", async () => {
  const h = eagerHarness(true);
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("app")] })));
  await h.advance(0);
  // Seen, so restarted at once (and that attempt's exit too, then the back-off holds the third).
  expect(h.lines((e) => e.reason === "Exited" || e.reason === "BackOff")).toEqual([
    "0.0s Exited app exited with code 1 (Error)",
    "0.0s Exited app exited with code 1 (Error)",
    "0.0s BackOff app",
  ]);
  expect(h.runtime.startsOf("app")).toBe(2);
});

test("a pod new in the desired set is synced before the pods that did not change: its start waits for none of their passes", async () => {
  const h = eagerHarness(false);
  const pods = ["a", "b", "c"].map((name) => pod({ name, containers: [container("app")] }));
  await h.kubelet.sync(desired(...pods.slice(0, 2)));
  const status = h.runtime.containerStatus.bind(h.runtime);
  h.runtime.containerStatus = (id) => {
    h.runtime.calls.push(`status ${id}`);
    return status(id);
  };
  h.runtime.calls.length = 0;
  await h.kubelet.sync(desired(...pods));
  expect(h.runtime.calls.slice(0, 2)).toEqual(["sandbox c-lab", "start app attempt=0"]);
  // ...and the others are still synced by the same call.
  expect(h.runtime.calls.filter((call) => call.startsWith("status "))).toHaveLength(2);
});
