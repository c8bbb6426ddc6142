import { expect, test } from "bun:test";
import type { PodRecord } from "../../src/kubelet/pod-state.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

test("a failed pull shows ErrImagePull, then ImagePullBackOff for the rest of the wait, then pulls again", async () => {
  const h = harness({ baseSeconds: 10, capSeconds: 300 });
  h.runtime.missingImages.add("nope:1");
  const app = pod({ name: "pull", containers: [container("app", { image: "nope:1" })] });
  const waiting: string[] = [];
  h.kubelet.onPodSynced((p: PodRecord) => {
    const reason = p.app[0]?.waiting?.reason ?? "";
    if (waiting.at(-1) !== reason) waiting.push(reason);
  });
  await h.kubelet.sync(desired(app));
  await h.advance(0);
  // Like the kubelet: the pass after the failure finds the image in back-off.
  expect(h.pod(app.key)?.app[0]?.waiting?.reason).toBe("ImagePullBackOff");
  await h.advance(9);
  expect(h.lines((e) => e.reason === "Failed" || e.reason === "BackOff")).toEqual(["0.0s Failed app", "0.0s Failed app", "0.0s BackOff app"]);
  await h.advance(1); // the 10s base has passed: another pull, another failure, a 20s wait
  await h.advance(20);
  expect(h.lines((e) => e.reason === "BackOff")).toEqual(["0.0s BackOff app", "10.0s BackOff app", "30.0s BackOff app"]);
  expect(waiting.slice(0, 5)).toEqual(["ErrImagePull", "ImagePullBackOff", "ErrImagePull", "ImagePullBackOff", "ErrImagePull"]);
  expect(h.events.find((e) => e.reason === "BackOff")?.message).toBe('Back-off pulling image "nope:1"');
});
