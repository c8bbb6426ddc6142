import { describe, expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { printPodRow } from "../../src/printers/pod-printer.ts";
import type { PodSpec } from "../../src/manifest/types.ts";

/** The STATUS/READY/RESTARTS cells `get pods` would print for the loop's view of `spec`. */
function row(h: ReturnType<typeof harness>, spec: PodSpec) {
  const record = h.pod(spec.key)!;
  const printed = printPodRow(servedPod(record, { runtimeName: "fake" }), h.clock.now());
  return { ready: printed.ready, status: printed.status, restarts: printed.restarts };
}

describe("the loop's status, as the kubectl printer shows it", () => {
  test("CrashLoopBackOff with restarts and the time since the last one", async () => {
    const h = harness();
    h.runtime.behaviours.set("crash", { exitAfterMs: 500, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    await h.advance(13);
    // The exit at 11.5 shows while its 20s wait runs (the time is the last state's, the exit at 1.0).
    expect(row(h, crash)).toEqual({ ready: "0/1", status: "Error", restarts: "2 (12s ago)" });
    // The exit at 72s waits 80s: shown for the pod worker's minute, then CrashLoopBackOff.
    await h.advance(127);
    expect(row(h, crash)).toEqual({ ready: "0/1", status: "CrashLoopBackOff", restarts: "4 (68s ago)" });
  });

  test("Init:CrashLoopBackOff while an init container crash-loops, Init:0/1 while it runs", async () => {
    const h = harness();
    h.runtime.behaviours.set("init", (n) => (n === 0 ? { exitAfterMs: 1000, exitCode: 1 } : { exitAfterMs: 100, exitCode: 1 }));
    const web = pod({ init: [container("init")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    expect(row(h, web).status).toBe("Init:0/1");
    await h.advance(2);
    expect(row(h, web)).toMatchObject({ ready: "0/1", status: "Init:Error" });
    await h.advance(138); // the crash at 71.4 waits 80s: a minute of its exit, then CrashLoopBackOff
    expect(row(h, web)).toMatchObject({ ready: "0/1", status: "Init:CrashLoopBackOff" });
  });

  test("Init:Error when an init container fails under Never", async () => {
    const h = harness();
    h.runtime.behaviours.set("init", { exitAfterMs: 100, exitCode: 1 });
    const web = pod({ restartPolicy: "Never", init: [container("init")], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    await h.advance(1);
    expect(row(h, web).status).toBe("Init:Error");
  });

  test("Completed under OnFailure, Error under Never", async () => {
    const h = harness();
    h.runtime.behaviours.set("ok", { exitAfterMs: 100, exitCode: 0 });
    h.runtime.behaviours.set("bad", { exitAfterMs: 100, exitCode: 2 });
    const ok = pod({ name: "ok", restartPolicy: "OnFailure", containers: [container("ok")] });
    const bad = pod({ name: "bad", restartPolicy: "Never", containers: [container("bad")] });
    await h.kubelet.sync(desired(ok, bad));
    await h.advance(1);
    expect(row(h, ok)).toEqual({ ready: "0/1", status: "Completed", restarts: "0" });
    expect(row(h, bad)).toEqual({ ready: "0/1", status: "Error", restarts: "0" });
  });

  test("Terminating while a removed pod stops", async () => {
    const h = harness();
    h.runtime.behaviours.set("web", { termDelayMs: 1000 });
    const web = pod();
    await h.kubelet.sync(desired(web));
    expect(row(h, web)).toEqual({ ready: "1/1", status: "Running", restarts: "0" });
    await h.kubelet.sync(desired());
    expect(row(h, web).status).toBe("Terminating");
  });

  test("a running sidecar counts in READY next to the app container", async () => {
    const h = harness();
    const web = pod({ init: [container("proxy", { restartPolicy: "Always" })], containers: [container("web")] });
    await h.kubelet.sync(desired(web));
    expect(row(h, web)).toEqual({ ready: "2/2", status: "Running", restarts: "0" });
  });

  test("the v1 object carries the static-pod annotations and the four conditions", async () => {
    const h = harness();
    const web = pod();
    await h.kubelet.sync(desired(web));
    const object = servedPod(h.pod(web.key)!, { runtimeName: "fake" });
    expect(object.metadata.annotations).toMatchObject({
      "kubernetes.io/config.hash": web.configHash,
      "kubernetes.io/config.source": "file",
    });
    expect(object.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      "PodReadyToStartContainers=True",
      "Initialized=True",
      "Ready=True",
      "ContainersReady=True",
    ]);
    expect(object.status?.containerStatuses?.[0]).toMatchObject({ name: "web", ready: true, started: true, restartCount: 0 });
  });
});
