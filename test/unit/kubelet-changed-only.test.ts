/**
 * A desired set that changes a few pods passes only those pods (the kubelet's HandlePodAdditions,
 * Updates and Removes), when the caller asks for it as `run` does after its first pass: a hundred
 * pods bound one burst at a time must not be a hundred passes over every pod.
 */
import { expect, test } from "bun:test";
import type { PodKey, PodSpec } from "../../src/manifest/types.ts";
import { NO_METRICS, type PodWorkerOperation } from "../../src/stats/kubelet-metrics.ts";
import { harness } from "../kubelet-harness.ts";
import { container, pod } from "../pod-builder.ts";

function counted() {
  const passes: PodWorkerOperation[] = [];
  return { passes, metrics: { ...NO_METRICS, podWorkerDuration: (operation: PodWorkerOperation) => void passes.push(operation) } };
}

const sleeper = (name: string, extra: Parameters<typeof pod>[0] = {}) => pod({ name, containers: [container("c", { command: ["sleep", "3600"] })], ...extra });
const set = (...pods: PodSpec[]) => new Map<PodKey, PodSpec>(pods.map((spec) => [spec.key, spec]));

test("changedOnly: a new pod, a changed pod and a removed pod are passed; the pods the set left alone are not", async () => {
  const { passes, metrics } = counted();
  const h = harness({ metrics });
  const [a, b, c] = [sleeper("a"), sleeper("b"), sleeper("c")];
  await h.kubelet.sync(set(a, b, c));
  expect(passes.filter((operation) => operation === "create").length).toBe(3);

  passes.length = 0;
  await h.kubelet.sync(set(a, b, c, sleeper("d")), { changedOnly: true });
  expect(passes).toEqual(["create"]);
  expect(h.runtime.startsOf("c")).toBe(4);

  // Renamed file, same content: taken as it is, and passed so its status says where it is read from.
  passes.length = 0;
  await h.kubelet.sync(set(a, { ...b, source: "/manifests/b-renamed.yaml" }, c, sleeper("d")), { changedOnly: true });
  expect(passes.length).toBe(1);

  // Removed: only the pod going is passed (until it is gone).
  passes.length = 0;
  await h.kubelet.sync(set(a, c, sleeper("d")), { changedOnly: true });
  expect(passes.length).toBeGreaterThan(0);
  expect(passes.every((operation) => operation === "kill")).toBe(true);
  await h.advance(31);
  expect(h.kubelet.pods.has(b.key)).toBe(false);

  // Without it the pass is level-triggered over every pod, as the first one after adoption must be.
  passes.length = 0;
  await h.kubelet.sync(set(a, c, sleeper("d")));
  expect(passes.length).toBe(3);
});
