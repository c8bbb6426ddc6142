/**
 * A pod whose manifest turned invalid is stopped as if its file were removed (the kubelet's file
 * source drops it), and its PodRemoved event says why, instead of claiming the file was removed.
 */
import { expect, test } from "bun:test";
import { harness } from "../kubelet-harness.ts";
import { desired, pod } from "../pod-builder.ts";

test("PodRemoved says the manifest is invalid when that is why the pod stopped, and removed otherwise", async () => {
  const invalid = new Set<string>();
  const h = harness({ removalReason: (source) => (invalid.has(source) ? "turned invalid" : undefined) });
  const web = pod({ name: "web" });
  const api = pod({ name: "api" });
  await h.kubelet.sync(desired(web, api));
  invalid.add(web.source);
  await h.kubelet.sync(desired());
  await h.advance(35);
  const removed = Object.fromEntries(h.events.filter((e) => e.reason === "PodRemoved").map((e) => [e.pod, e.message]));
  expect(removed).toEqual({
    [web.fullName]: `Stopped pod ${web.fullName}: its manifest ${web.source} turned invalid`,
    [api.fullName]: `Stopped pod ${api.fullName}: its manifest ${api.source} was removed`,
  });
});
