import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/api/http/status.ts";
import { openWatches } from "../../src/api/watch/watch-hub.ts";
import { eventKind, podKind } from "../../src/api/resources/watch-kinds.ts";
import { serveWatch, watchOrList } from "../../src/api/watch/watch.ts";
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
  return watchOrList(apiRequest(`/api/v1/namespaces/demo/pods?${query}`, { params: { namespace: "demo" }, ...options }), h.api, podKind, neverList) as Response;
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
      // Each exit shows through its back-off; the pass at the wait's end shows CrashLoopBackOff, then restarts.
      "MODIFIED crash-lab 1 Error",
      "MODIFIED crash-lab 1 CrashLoopBackOff",
      "MODIFIED crash-lab 2 Running",
      "MODIFIED crash-lab 2 Error",
      "ADDED web-lab 0 Running",
      "MODIFIED crash-lab 2 CrashLoopBackOff",
      "DELETED web-lab 0 Error",
      "MODIFIED crash-lab 3 Running",
      "MODIFIED crash-lab 3 Error",
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
    expect(watch.lines.map(podLine)).toEqual(["ADDED web-lab 0 Running", "MODIFIED crash-lab 1 Error"]);
    h.close();
  });

  test("from RV N: a pod that existed at N and was deleted before the watch began is DELETED (kubectl delete's --wait)", async () => {
    using dir = tempDir();
    const { h, web } = crashLoop(dir.path);
    await h.kubelet.sync(desired(web));
    await h.advance(0.5);
    const rv = h.api.store.revision();
    await h.kubelet.sync(desired());
    await h.advance(35);
    const watch = readWatch(watchPods(h, `fieldSelector=metadata.name%3Dweb-lab&resourceVersion=${rv}&watch=true`));
    await settle();
    expect(watch.lines.map(podLine)).toEqual(["DELETED web-lab 0 Error"]);
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
    expect(watch.lines.map(podLine)).toEqual(["ADDED crash-lab 0 Running", "MODIFIED crash-lab 1 Running", "MODIFIED crash-lab 1 Error"]);
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

  test("with Accept as=Table each event's object is a one-row Table carrying the pod's metadata, as the list's rows", async () => {
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
    expect(first!.object.rows[0].object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "crash-lab" } });
    expect(first!.object.metadata.resourceVersion).toBe(first!.object.rows[0].object.metadata.resourceVersion);
    expect(rest.map((line) => `${line.type} ${line.object.rows[0].cells.slice(0, 4).join(" ")}`)).toEqual([
      "MODIFIED crash-lab 1/1 Running 1 (0s ago)",
      "MODIFIED crash-lab 0/1 Error 1 (1s ago)",
    ]);
    const whole = readWatch(watchPods(h, "includeObject=Object&watch=true", { accept: TABLE_ACCEPT }));
    await settle();
    expect(whole.lines[0]!.object.rows[0].object).toMatchObject({ kind: "Pod", apiVersion: "v1", metadata: { name: "crash-lab" } });
    whole.cancel();
    h.close();
  });
});

describe("events watch", () => {
  test("kubectl events -w (no RV): ADDED for the existing events, then new ones ADDED and a repeat MODIFIED with its count", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    await h.advance(0.5);
    const request = apiRequest("/api/v1/namespaces/demo/events?limit=500&watch=true", { params: { namespace: "demo" } });
    const watch = readWatch(await watchOrList(request, h.api, eventKind, neverList));
    await settle();
    const line = (l: { type: string; object: Record<string, any> }) => `${l.type} ${l.object.reason} x${l.object.count}`;
    expect(watch.lines.map(line)).toEqual(["ADDED Created x1", "ADDED Started x1"]);
    expect(watch.lines[0]!.object).toMatchObject({ kind: "Event", apiVersion: "v1", involvedObject: { kind: "Pod", name: "crash-lab" }, source: { component: "kubelet", host: "lab" }, eventTime: null });
    await h.advance(13);
    await settle();
    // Each repeat raises the event's count (the API server's series): MODIFIED, not a new event.
    expect(watch.lines.slice(2).map(line)).toEqual([
      "ADDED Exited x1",
      "MODIFIED Created x2",
      "MODIFIED Started x2",
      "MODIFIED Exited x2",
      "ADDED BackOff x1",
      "MODIFIED Created x3",
      "MODIFIED Started x3",
      "MODIFIED Exited x3",
      "MODIFIED BackOff x2",
    ]);
    h.close();
  });

  test("an involvedObject selector narrows the watch; as=Table gives the event columns", async () => {
    using dir = tempDir();
    const { h, crash, web } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash, web));
    await h.advance(0.5);
    const query = "fieldSelector=involvedObject.kind%3DPod%2CinvolvedObject.apiVersion%3Dv1%2CinvolvedObject.name%3Dweb-lab&resourceVersion=0&watch=true";
    const request = apiRequest(`/api/v1/namespaces/demo/events?${query}`, { params: { namespace: "demo" }, accept: TABLE_ACCEPT });
    const watch = readWatch(await watchOrList(request, h.api, eventKind, neverList));
    await h.advance(3);
    await settle();
    expect(watch.lines.map((l) => l.object.rows[0].cells.slice(1, 4).join(" "))).toEqual(["Normal Created pod/web-lab", "Normal Started pod/web-lab"]);
    expect(watch.lines[0]!.object.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"]);
    h.close();
  });
});

describe("history, limits and clients", () => {
  test("a watch from an RV older than the compacted history gets one ERROR event with the 410 Expired Status, then the stream ends", async () => {
    using dir = tempDir();
    const { h, crash, web } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash, web));
    await h.advance(0.5);
    const old = h.api.store.revision();
    await h.kubelet.sync(desired(crash));
    await h.advance(35);
    h.clock.step(10 * 60_000);
    h.store.prune();
    const compacted = h.api.store.compactedRevision();
    expect(compacted).toBeGreaterThan(old);
    const response = watchPods(h, `resourceVersion=${old}&watch=true`);
    expect(response.status).toBe(200);
    const watch = readWatch(response);
    await settle();
    expect(watch.lines).toEqual([
      {
        type: "ERROR",
        object: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `too old resource version: ${old} (${compacted})`, reason: "Expired", code: 410 },
      },
    ]);
    expect(watch.state.ended).toBe(true);
    expect(openWatches(h.api)).toBe(0);
    // From the compacted revision on, nothing was lost: the watch runs.
    const current = readWatch(watchPods(h, `resourceVersion=${compacted}&watch=true`));
    await settle();
    expect(current.state.ended).toBe(false);
    h.close();
  });

  test("watches beyond maxWatches get 429 TooManyRequests; a disconnect frees the slot and unsubscribes from the feed", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path, { maxWatches: 2 });
    await h.kubelet.sync(desired(crash));
    const first = new AbortController();
    readWatch(watchPods(h, "watch=true", { signal: first.signal }));
    const second = readWatch(watchPods(h, "watch=true"));
    expect(h.feed.listeners.size).toBe(1);
    let refused: unknown;
    try {
      watchPods(h, "watch=true");
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).toStatus()).toMatchObject({ code: 429, reason: "TooManyRequests" });
    first.abort();
    expect(openWatches(h.api)).toBe(1);
    second.cancel();
    await settle();
    expect(openWatches(h.api)).toBe(0);
    expect(h.feed.listeners.size).toBe(0);
    readWatch(watchPods(h, "watch=true"));
    expect(openWatches(h.api)).toBe(1);
    h.close();
  });

  test("a client that stops reading is dropped once its queue passes the bound; another watch goes on", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    const stuck = serveWatch(apiRequest("/api/v1/pods?watch=true"), h.api, podKind, 4096);
    const reading = readWatch(watchPods(h, "watch=true"));
    expect(openWatches(h.api)).toBe(2);
    await h.advance(60);
    await settle();
    expect(openWatches(h.api)).toBe(1);
    // Dropped as the API server drops a watcher that does not keep up: the queue freed, the stream ended.
    const late = readWatch(stuck);
    await settle();
    expect(late).toMatchObject({ lines: [], state: { ended: true } });
    const before = reading.lines.length;
    await h.advance(60);
    await settle();
    expect(reading.lines.length).toBeGreaterThan(before);
    h.close();
  });

  test("the initial ADDED are written as the client reads them: a list larger than the bound is not dropped", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    const pods = Array.from({ length: 12 }, (_, i) => pod({ name: `web${i}` }));
    await h.kubelet.sync(desired(...pods));
    const watch = readWatch(serveWatch(apiRequest("/api/v1/pods?watch=true"), h.api, podKind, 4096));
    await settle();
    expect(watch.lines.map((line) => line.object.metadata.name)).toEqual(pods.map((p) => `${p.name}-lab`).sort());
    expect(JSON.stringify(watch.lines).length).toBeGreaterThan(4096);
    expect(watch.state.ended).toBe(false);
    h.close();
  });

  test("a watch without timeoutSeconds ends between --min-request-timeout and twice it, as the API server's do", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    const watch = readWatch(watchPods(h, "watch=true"));
    await h.advance(h.api.limits.minRequestTimeoutSeconds - 1);
    expect(watch.state.ended).toBe(false);
    await h.advance(h.api.limits.minRequestTimeoutSeconds + 2);
    await settle();
    expect(watch.state.ended).toBe(true);
    expect(openWatches(h.api)).toBe(0);
    h.close();
  });

  test("timeoutSeconds ends the stream cleanly; a bad resourceVersion, timeoutSeconds or selector is a 400", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    const watch = readWatch(watchPods(h, "allowWatchBookmarks=true&timeoutSeconds=30&watch=true"));
    await h.advance(29);
    expect(watch.state.ended).toBe(false);
    await h.advance(2);
    await settle();
    expect(watch.state.ended).toBe(true);
    expect(openWatches(h.api)).toBe(0);
    const status = (query: string) => {
      try {
        watchPods(h, query);
      } catch (error) {
        return (error as ApiError).toStatus();
      }
    };
    expect(status("resourceVersion=abc&watch=true")).toMatchObject({ code: 400, reason: "BadRequest", message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax' });
    expect(status("timeoutSeconds=soon&watch=true")).toMatchObject({ code: 400, reason: "BadRequest" });
    expect(status("fieldSelector=spec.color%3Dred&watch=true")).toMatchObject({ code: 400, message: "field label not supported: spec.color" });
    expect(status("labelSelector=a%3D%3D%3Db&watch=true")).toMatchObject({ code: 400, reason: "BadRequest" });
    expect(openWatches(h.api)).toBe(0);
    h.close();
  });

  test("sendInitialEvents with bookmarks ends the initial ADDED with the initial-events-end BOOKMARK", async () => {
    using dir = tempDir();
    const { h, crash } = crashLoop(dir.path);
    await h.kubelet.sync(desired(crash));
    const watch = readWatch(watchPods(h, "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&watch=true"));
    await settle();
    expect(watch.lines.map((l) => l.type)).toEqual(["ADDED", "BOOKMARK"]);
    expect(watch.lines[1]!.object).toEqual({ kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: String(h.api.store.revision()), annotations: { "k8s.io/initial-events-end": "true" } } });
    h.close();
  });
});
