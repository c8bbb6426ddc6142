import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/api/status.ts";
import { openWatches } from "../../src/api/watch-hub.ts";
import { podKind } from "../../src/api/watch-kinds.ts";
import { serveWatch, watchOrList } from "../../src/api/watch.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { apiHarness, apiRequest, podLine, readWatch, settle, TABLE_ACCEPT } from "../api-watch-fixtures.ts";

const neverList = () => {
  throw new Error("the list handler ran for a watch");
};

function crashLoop(dir: string, limits = {}) {
  const h = apiHarness(dir, limits);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  return { h, crash: pod({ name: "crash", containers: [container("crash")] }), web: pod({ name: "web" }) };
}

function watchPods(h: ReturnType<typeof apiHarness>, query: string, options: { accept?: string; signal?: AbortSignal } = {}) {
  return watchOrList(apiRequest(`/api/v1/namespaces/demo/pods?${query}`, { params: { namespace: "demo" }, ...options }), h.api, "pods", neverList) as Response;
}

describe("pods watch", () => {
  test("from RV 0: ADDED for the current pods, then a crash loop's changes as MODIFIED, a new pod ADDED, a removed one DELETED", async () => {
    using dir = tempDir();
    const { h, crash, web } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    await h.advance(0.5);
    const response = watchPods(h, "watch=true");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const watch = readWatch(response);
    await settle();
    expect(watch.lines.map(podLine)).toEqual(["ADDED crash-lab 0 Running"]);
    await h.advance(13);
    await h.kubelet.sync(desired(crash, web));
    await h.advance(1);
    await h.kubelet.sync(desired(crash));
    await h.advance(35);
    await settle();
    expect(watch.lines.map(podLine)).toEqual([
      "ADDED crash-lab 0 Running",
      "MODIFIED crash-lab 1 Running",
      "MODIFIED crash-lab 1 CrashLoopBackOff",
      "MODIFIED crash-lab 2 Running",
      "MODIFIED crash-lab 2 CrashLoopBackOff",
      "ADDED web-lab 0 Running",
      "DELETED web-lab 0 Error",
      "MODIFIED crash-lab 3 Running",
      "MODIFIED crash-lab 3 CrashLoopBackOff",
    ]);
    const versions = watch.lines.map((line) => Number(line.object.metadata.resourceVersion));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(watch.state.ended).toBe(false);
    h.close();
  });

  test("from RV N: only changes after N; a pod that existed at N is MODIFIED, one created after it ADDED", async () => {
    using dir = tempDir();
    const { h, crash, web } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    await h.advance(1.5); // the first exit and restart
    const rv = h.api.store.revision();
    await h.kubelet.sync(desired(crash, web));
    await h.advance(1);
    const watch = readWatch(watchPods(h, `resourceVersion=${rv}&watch=1`));
    await settle();
    expect(watch.lines.map(podLine)).toEqual(["ADDED web-lab 0 Running", "MODIFIED crash-lab 1 CrashLoopBackOff"]);
    h.close();
  });

  test("get pod NAME -w: RV 0 with a metadata.name selector sends that pod's synthetic ADDED first, then only its changes", async () => {
    using dir = tempDir();
    const { h, crash, web } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash, web));
    await h.advance(0.5);
    const watch = readWatch(watchPods(h, "fieldSelector=metadata.name%3Dcrash-lab&resourceVersion=0&watch=true"));
    await settle();
    expect(watch.lines.map(podLine)).toEqual(["ADDED crash-lab 0 Running"]);
    await h.kubelet.sync(desired(crash));
    await h.advance(2);
    await settle();
    expect(watch.lines.map(podLine)).toEqual(["ADDED crash-lab 0 Running", "MODIFIED crash-lab 1 Running", "MODIFIED crash-lab 1 CrashLoopBackOff"]);
    h.close();
  });

  test("a pod whose phase leaves a status.phase selector is DELETED for that watch; one entering it ADDED", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    h.runtime.behaviours.set("once", { exitAfterMs: 1000, exitCode: 0 });
    const once = pod({ name: "once", containers: [container("once")], restartPolicy: "Never" });
    const running = readWatch(watchPods(h, "fieldSelector=status.phase%3DRunning&watch=true"));
    const succeeded = readWatch(watchPods(h, "fieldSelector=status.phase%21%3DRunning,status.phase%21%3DPending&watch=true"));
    await h.kubelet.sync(desired(once));
    await h.advance(2);
    await settle();
    expect(running.lines.map((line) => `${line.type} ${line.object.status.phase}`)).toEqual(["ADDED Running", "DELETED Succeeded"]);
    expect(succeeded.lines.map((line) => `${line.type} ${line.object.status.phase}`)).toEqual(["ADDED Succeeded"]);
    h.close();
  });

  test("with Accept as=Table each event's object is a one-row Table carrying the pod", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    await h.advance(0.5);
    const watch = readWatch(watchPods(h, "watch=true", { accept: TABLE_ACCEPT }));
    await h.advance(2);
    await settle();
    const [first, ...rest] = watch.lines;
    expect(first!.type).toBe("ADDED");
    expect(first!.object).toMatchObject({ kind: "Table", apiVersion: "meta.k8s.io/v1" });
    expect(first!.object.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]);
    expect(first!.object.rows).toHaveLength(1);
    expect(first!.object.rows[0].object).toMatchObject({ kind: "Pod", apiVersion: "v1", metadata: { name: "crash-lab" } });
    expect(first!.object.metadata.resourceVersion).toBe(first!.object.rows[0].object.metadata.resourceVersion);
    expect(rest.map((line) => `${line.type} ${line.object.rows[0].cells.slice(0, 4).join(" ")}`)).toEqual([
      "MODIFIED crash-lab 1/1 Running 1 (0s ago)",
      "MODIFIED crash-lab 0/1 CrashLoopBackOff 1 (0s ago)",
    ]);
    h.close();
  });
});
