/**
 * activeDeadlineSeconds, as the kubelet's activeDeadlineHandler: at the deadline from its start the
 * pod is Failed with reason DeadlineExceeded (a Normal event), its containers stopped with the pod's
 * grace and never restarted; an API pod's deadline set or lowered in place applies to the running
 * pod, counted from its original start.
 */
import { expect, test } from "bun:test";
import type { PodSpec } from "../../src/manifest/types.ts";
import { readPod } from "../../src/manifest/validation/validate.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

const sleeper = (extra: Partial<PodSpec> = {}): PodSpec => ({ ...pod({ name: "web", grace: 5, containers: [container("web", { command: ["sleep", "3600"] })] }), ...extra });

function served(h: ReturnType<typeof harness>, name: string) {
  return h.kubelet.servedPods().find((candidate) => candidate.metadata.name === `${name}-lab`)!;
}

test("at its deadline the pod fails with DeadlineExceeded, its containers stopped with its grace, nothing restarted", async () => {
  const h = harness();
  // Only SIGKILL ends it, so the stop shows the grace it was given: the pod's 5 s.
  h.runtime.behaviours.set("web", { ignoreSigterm: true });
  await h.kubelet.sync(desired(sleeper({ activeDeadlineSeconds: 30 })));
  await h.advance(29);
  expect(served(h, "web").status?.phase).toBe("Running");
  const mark = h.events.length;
  // No other pass comes by: the pod's own wake-up at its deadline does it.
  await h.advance(1);
  expect(served(h, "web").status).toMatchObject({ phase: "Failed", reason: "DeadlineExceeded", message: "Pod was active on the node longer than the specified deadline" });
  await h.advance(4);
  expect(h.runtime.calls.filter((call) => call.startsWith("kill web"))).toEqual(["kill web SIGTERM"]);
  await h.advance(1);
  expect(h.runtime.calls.filter((call) => call.startsWith("kill web"))).toEqual(["kill web SIGTERM", "kill web SIGKILL"]);
  expect(h.events.slice(mark).map((e) => `${e.type} ${e.reason} ${e.container}: ${e.message}`)).toEqual([
    "Normal DeadlineExceeded : Pod was active on the node longer than the specified deadline",
    "Normal Killing web: Stopping container web",
    "Warning GraceExpired web: Container web did not stop within its grace period (5s); sending SIGKILL",
    expect.stringMatching(/^Warning Exited web: Container web exited with code 137/),
  ]);
  await h.advance(600);
  expect(h.runtime.startsOf("web")).toBe(1);
  expect(served(h, "web").status?.reason).toBe("DeadlineExceeded");
});

test("a deadline set in place on a running API pod applies from its start, without restarting it", async () => {
  const h = harness();
  const base = sleeper();
  await h.kubelet.sync(desired(base));
  await h.advance(100);
  await h.kubelet.sync(desired({ ...base, configHash: `${base.configHash}-deadline`, activeDeadlineSeconds: 120 }));
  await h.advance(1);
  expect(served(h, "web").status?.phase).toBe("Running");
  expect(h.runtime.startsOf("web")).toBe(1);
  await h.advance(20);
  expect(served(h, "web").status).toMatchObject({ phase: "Failed", reason: "DeadlineExceeded" });
});

test("validated as the API server does: an integer from 1 to 2147483647", () => {
  const manifest = (value: unknown) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { activeDeadlineSeconds: value, containers: [{ name: "c", image: "busybox", command: ["true"] }] } });
  expect(readPod(manifest(10), { node: "n", source: "/m/p.yaml", file: "/m/p.yaml" }).pod!.activeDeadlineSeconds).toBe(10);
  expect(readPod(manifest(0), { node: "n", source: "/m/p.yaml", file: "/m/p.yaml" }).issues.map((issue) => issue.path.join("."))).toEqual(["spec.activeDeadlineSeconds"]);
  expect(readPod(manifest(2_147_483_648), { node: "n", source: "/m/p.yaml", file: "/m/p.yaml" }).issues.map((issue) => issue.path.join("."))).toEqual(["spec.activeDeadlineSeconds"]);
});
