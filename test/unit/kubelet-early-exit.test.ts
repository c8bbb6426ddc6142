/**
 * Found by the e2e crash loop (test/e2e/adopt-process.test.ts): a container that exits at once can
 * be reported by the runtime before startContainer has returned its id, so the loop did not know
 * whose exit it was, dropped it, and the pod sat "Running" until the next periodic resync.
 */
import { expect, test } from "bun:test";
import type { ContainerConfig } from "../../src/runtime/runtime.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

test("an exit reported before startContainer returns still wakes the pod", async () => {
  const h = harness({ baseSeconds: 1, capSeconds: 8 });
  const start = h.runtime.startContainer.bind(h.runtime);
  // The process runtime's directory watch can see the exit marker while the start call is in flight.
  h.runtime.startContainer = async (config: ContainerConfig) => {
    const id = await start(config);
    h.runtime.finish(id, 1);
    return id;
  };
  const crash = pod({ name: "crash", containers: [container("crash")] });
  await h.kubelet.sync(desired(crash));
  await h.advance(0.1);
  const record = h.pod(crash.key)!.app[0]!;
  // Exited, restarted at once (the first restart), exited again and now backing off: no resync needed.
  expect(h.lines((e) => e.reason === "Started" || e.reason === "Exited" || e.reason === "BackOff")).toEqual([
    "0.0s Started crash",
    "0.0s Exited crash exited with code 1 (Error)",
    "0.0s Started crash",
    "0.0s Exited crash exited with code 1 (Error)",
    "0.0s BackOff crash",
  ]);
  // The exit shows while the back-off runs.
  expect(record.state).toBe("terminated");
  expect(restartCountOf(record)).toBe(1);
});
