/**
 * A pod's spec.nodeName is the node the API serves: `--node`, else the host name (not a fixed
 * "localhost"), so `kubectl describe node` finds its pods and `-o wide` shows the node that exists.
 */
import { expect, test } from "bun:test";
import { hostname } from "node:os";
import { harness } from "../kubelet-harness.ts";
import { desired, pod } from "../pod-builder.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

test("spec.nodeName is --node, or the host name when no --node is set", async () => {
  const h = harness();
  const named = pod({ name: "web", node: "lab" });
  const unnamed = pod({ name: "api", node: "" });
  await h.kubelet.sync(desired(named, unnamed));
  expect(servedPod(h.pod(named.key)!, { runtimeName: "fake" }).spec.nodeName).toBe("lab");
  expect(servedPod(h.pod(unnamed.key)!, { runtimeName: "fake" }).spec.nodeName).toBe(hostname());
});
