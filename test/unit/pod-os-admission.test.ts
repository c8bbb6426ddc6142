/**
 * A pod whose spec.os names another OS than the node's is refused at admission, as the kubelet's
 * predicate admit handler (rejectPodAdmissionBasedOnOSField) leaves it: Failed, PodOSNotSupported,
 * its containers never started.
 */
import { expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

function withOs(name: string, os: string | undefined) {
  const spec = pod({ name, containers: [container("main")] });
  spec.manifest = { ...spec.manifest, spec: { ...((spec.manifest.spec as object) ?? {}), ...(os && { os: { name: os } }) } };
  return spec;
}

test("a pod for windows is refused on a linux node; one for linux, or without spec.os, runs", async () => {
  const h = harness();
  const windows = withOs("windows", "windows");
  const linux = withOs("linux", "linux");
  const plain = withOs("plain", undefined);
  await h.kubelet.sync(desired(windows, linux, plain));
  await h.advance(1);
  const status = (key: string) => servedPod(h.pod(key)!, { runtimeName: "fake" }).status!;
  expect(status(windows.key)).toMatchObject({ phase: "Failed", reason: "PodOSNotSupported", message: "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS" });
  expect(h.pod(windows.key)!.app[0]!.attempts).toBe(0);
  expect(status(linux.key).phase).toBe("Running");
  expect(status(plain.key).phase).toBe("Running");
});
