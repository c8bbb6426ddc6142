/** A container the runtime reports OOMKilled (docker's State.OOMKilled), through the loop to `get pods` and the record. */
import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { printPodRow } from "../../src/printers/pod-printer.ts";
import type { PodSpec } from "../../src/manifest/types.ts";

function statusOf(h: ReturnType<typeof harness>, spec: PodSpec): string {
  return printPodRow(servedPod(h.pod(spec.key)!, { runtimeName: "fake" }), h.clock.now()).status;
}

describe("OOMKilled from the runtime", () => {
  test("the attempt ends with reason OOMKilled and 137, and STATUS says OOMKilled when it stays down", async () => {
    const h = harness();
    h.runtime.behaviours.set("hog", { exitAfterMs: 500, exitCode: 137, exitReason: "OOMKilled" });
    const hog = pod({ name: "hog", restartPolicy: "Never", containers: [container("hog")] });
    await h.kubelet.sync(desired(hog));
    await h.advance(1);
    expect(h.pod(hog.key)!.app[0]!.terminated).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
    expect(statusOf(h, hog)).toBe("OOMKilled");
  });

  test("restarted, it crash-loops as CrashLoopBackOff with OOMKilled as its last state", async () => {
    // A wait longer than the pod worker's resync: the kill shows for a minute, then CrashLoopBackOff.
    const h = harness({ baseSeconds: 100 });
    h.runtime.behaviours.set("hog", { exitAfterMs: 500, exitCode: 137, exitReason: "OOMKilled" });
    const hog = pod({ name: "hog", containers: [container("hog")] });
    await h.kubelet.sync(desired(hog));
    await h.advance(13);
    expect(statusOf(h, hog)).toBe("OOMKilled");
    await h.advance(60);
    expect(statusOf(h, hog)).toBe("CrashLoopBackOff");
    expect(h.pod(hog.key)!.app[0]!.lastTermination).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
  });
});
