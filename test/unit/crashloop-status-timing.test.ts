/**
 * When a crash loop's status shows the exit and when CrashLoopBackOff, as the kubelet's pod worker
 * and reasonCache time them: the pass that meets an exit draws the status first (the exit), the
 * back-off its start then meets shows from the next pass, run at the back-off's end or a resync
 * interval (1 min) later, whichever comes first.
 */
import { describe, expect, test } from "bun:test";
import { podKind } from "../../src/api/resources/watch-kinds.ts";
import { watchOrList } from "../../src/api/watch/watch.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { tempDir } from "../store-fixtures.ts";
import { apiHarness, apiRequest, readWatch, settle, type WatchLine } from "../api-watch-fixtures.ts";

/** restartCount and state as `kubectl get pod -w` would tell them apart, with the time of the state's change. */
function containerLine(line: WatchLine, start: number): string {
  const status = line.object.status?.containerStatuses?.[0];
  const state = status?.state ?? {};
  const seconds = (at: string) => `${Math.round((Date.parse(at) - start) / 100) / 10}s`;
  if (state.running) return `${status.restartCount} Running since ${seconds(state.running.startedAt)}`;
  if (state.terminated) return `${status.restartCount} Terminated ${state.terminated.reason} ${state.terminated.exitCode} at ${seconds(state.terminated.finishedAt)}`;
  return `${status.restartCount} Waiting ${state.waiting?.reason} after ${status.lastState?.terminated?.reason} at ${seconds(status.lastState?.terminated?.finishedAt)}`;
}

describe("a crash loop's status over time", () => {
  test("get pod -w: Running, the exit (Error) through the back-off, CrashLoopBackOff at its end, Running again; a wait past the resync shows CrashLoopBackOff from a minute on", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    const start = h.clock.now();
    await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
    const response = watchOrList(apiRequest("/api/v1/namespaces/demo/pods?watch=true", { params: { namespace: "demo" } }), h.api, podKind, () => {
      throw new Error("the list handler ran for a watch");
    }) as Response;
    const watch = readWatch(response);
    // Waits of 10s, 20s, 40s, then 80s: the last one is longer than the pod worker's minute.
    await h.advance(140);
    await settle();
    expect(watch.lines.map((line) => containerLine(line, start))).toEqual([
      "0 Running since 0s",
      // The first crash is restarted at once.
      "1 Running since 1s",
      "1 Terminated Error 1 at 2s",
      "1 Waiting CrashLoopBackOff after Error at 2s",
      "2 Running since 12s",
      "2 Terminated Error 1 at 13s",
      "2 Waiting CrashLoopBackOff after Error at 13s",
      "3 Running since 33s",
      "3 Terminated Error 1 at 34s",
      "3 Waiting CrashLoopBackOff after Error at 34s",
      "4 Running since 74s",
      "4 Terminated Error 1 at 75s",
      // The 80s wait: the exit for the pod worker's minute, then CrashLoopBackOff for the rest.
      "4 Waiting CrashLoopBackOff after Error at 75s",
    ]);
    const backOffs = h.events.filter((event) => event.reason === "BackOff").map((event) => (event.at - start) / 1000);
    // The BackOff event comes with the pass that meets the exit, not with the CrashLoopBackOff status.
    expect(backOffs).toEqual([2, 13, 34, 75]);
    watch.cancel();
    h.close();
  });

  test("the exit shows until the minute is up, CrashLoopBackOff after it, and the restart comes at the back-off's end", async () => {
    const h = harness({ baseSeconds: 100 });
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 3 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    await h.advance(61.9); // exits at 1s (restarted at once) and 2s: the wait runs to 102s
    expect(h.pod(crash.key)!.app[0]).toMatchObject({ state: "terminated", terminated: { exitCode: 3, reason: "Error" } });
    await h.advance(0.2);
    expect(h.pod(crash.key)!.app[0]).toMatchObject({ state: "waiting", waiting: { reason: "CrashLoopBackOff" }, lastTermination: { exitCode: 3 } });
    await h.advance(39.8);
    expect(h.pod(crash.key)!.app[0]!.state).toBe("waiting");
    await h.advance(0.2);
    expect(h.pod(crash.key)!.app[0]!.state).toBe("running");
  });

  test("a start that keeps failing shows RunContainerError through the back-off, then CrashLoopBackOff, never a terminated state", async () => {
    const h = harness({ baseSeconds: 100 });
    h.runtime.behaviours.set("bad", { startError: 'exec: "nope": executable file not found in $PATH' });
    const bad = pod({ name: "bad", containers: [container("bad")] });
    await h.kubelet.sync(desired(bad));
    await h.advance(1);
    const failing = h.pod(bad.key)!.app[0]!;
    expect(failing.state).toBe("waiting");
    expect(failing.waiting?.reason).toBe("RunContainerError");
    expect(failing.lastTermination).toMatchObject({ exitCode: 128, reason: "StartError" });
    await h.advance(60);
    expect(h.pod(bad.key)!.app[0]!.waiting?.reason).toBe("CrashLoopBackOff");
  });
});
