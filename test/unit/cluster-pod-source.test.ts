/**
 * The cluster's pods as a pod source, against a fake API server whose watches the test feeds: the
 * list then the watch from its resourceVersion, bookmarks, a 410 that lists again, an outage
 * retried on the fake clock, refused and mirror pods kept aside.
 */
import { describe, expect, test } from "bun:test";
import { ClusterPodSource, type ClusterPodObject } from "../../src/config/cluster-pod-source.ts";
import { ClusterApiError, type ClusterApi, type ClusterRequest, type WatchEvent } from "../../src/node/cluster-client.ts";
import { FakeClock } from "../fake-clock.ts";
import { WatchFeed } from "../fake-watch-feed.ts";

type Query = Record<string, string | number | boolean | undefined>;

/** Lists answer `items` at `version`; each watch is a stream the test pushes into, or an error it throws. */
class FakePods implements Pick<ClusterApi, "request" | "watch"> {
  items: ClusterPodObject[] = [];
  version = "10";
  down = false;
  lists: ClusterRequest[] = [];
  watches: Query[] = [];
  /** Thrown by the next watch instead of streaming. */
  watchError?: ClusterApiError;
  private readonly feed = new WatchFeed<ClusterPodObject>();

  async request<T>(request: ClusterRequest): Promise<T> {
    this.lists.push(request);
    if (this.down) throw new ClusterApiError(0, "ServiceUnavailable", "connection refused", request);
    return { metadata: { resourceVersion: this.version }, items: this.items } as T;
  }

  async *watch<T>(_path: string, query: Query, signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    this.watches.push(query);
    const error = this.watchError;
    this.watchError = undefined;
    if (error) throw error;
    yield* this.feed.stream<T>(signal);
  }

  send(event: WatchEvent<ClusterPodObject> | "end"): void {
    this.feed.send(event);
  }
}

const pod = (name: string, uid: string, version: string, extra: Partial<ClusterPodObject["metadata"]> = {}, command: string[] | null = ["sleep", "60"]): ClusterPodObject => ({
  metadata: { name, namespace: "default", uid, resourceVersion: version, creationTimestamp: "2026-01-01T12:00:00Z", ...extra },
  spec: { nodeName: "n1", containers: [{ name: "c", image: "busybox", ...(command && { command }) }] },
});

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

function setup() {
  const api = new FakePods();
  const clock = new FakeClock();
  const lines: string[] = [];
  let changes = 0;
  const source = new ClusterPodSource({ client: api, nodeName: "n1", rules: { runtime: "process" }, clock, log: (line) => lines.push(line), onChange: () => changes++, retry: { baseMs: 1000, capMs: 4000 } });
  return { api, clock, lines, source, changes: () => changes };
}

describe("ClusterPodSource", () => {
  test("lists the node's pods, then watches from the list's resourceVersion with bookmarks", async () => {
    const { api, source, changes } = setup();
    api.items = [pod("web", "u1", "9")];
    source.start();
    await turn();
    expect(source.ready).toBe(true);
    expect(api.lists[0]!.query).toEqual({ fieldSelector: "spec.nodeName=n1" });
    expect(api.watches[0]).toMatchObject({ fieldSelector: "spec.nodeName=n1", resourceVersion: "10", allowWatchBookmarks: true });
    const web = source.pods().get("default/web")!;
    expect([web.uid, web.fullName, web.api?.createdAt]).toEqual(["u1", "web", Date.UTC(2026, 0, 1, 12)]);
    expect(changes()).toBe(1);
    api.send({ type: "ADDED", object: pod("db", "u2", "11") });
    api.send({ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } as ClusterPodObject });
    await turn();
    expect([...source.pods().keys()]).toEqual(["default/web", "default/db"]);
    // The watch ends (its timeout): resumed from the bookmark's resourceVersion, no list.
    api.send("end");
    await turn();
    expect(api.lists.length).toBe(1);
    expect(api.watches[1]!.resourceVersion).toBe("15");
    await source.stop();
  });

  test("a deletion's grace: the delete started deletionGracePeriodSeconds before the deletionTimestamp", async () => {
    const { api, source } = setup();
    api.items = [pod("web", "u1", "9", { deletionTimestamp: "2026-01-01T12:00:30Z", deletionGracePeriodSeconds: 30 })];
    source.start();
    await turn();
    expect(source.pods().get("default/web")!.api?.deletion).toEqual({ requestedAt: Date.UTC(2026, 0, 1, 12), gracePeriodSeconds: 30 });
    await source.stop();
  });

  test("a pod gone while being deleted (a force delete) stays as a tombstone with its grace until the loop is done with it", async () => {
    const { api, source } = setup();
    api.items = [pod("web", "u1", "9"), pod("db", "u2", "9")];
    source.start();
    await turn();
    api.send({ type: "DELETED", object: pod("web", "u1", "12", { deletionTimestamp: "2026-01-01T12:00:00Z", deletionGracePeriodSeconds: 0 }) });
    api.send({ type: "DELETED", object: pod("db", "u2", "13") });
    await turn();
    // db went without a deletion this source saw: simply gone (the loop stops it with its own grace).
    expect([...source.pods().keys()]).toEqual(["default/web"]);
    expect(source.pods().get("default/web")!.api?.deletion).toEqual({ requestedAt: Date.UTC(2026, 0, 1, 12), gracePeriodSeconds: 0 });
    expect(source.isTombstone("u1")).toBe(true);
    source.forgetTombstone("u1");
    expect(source.pods().size).toBe(0);
    await source.stop();
  });

  test("410 Expired lists again; pods gone meanwhile leave the set", async () => {
    const { api, source } = setup();
    api.items = [pod("web", "u1", "9"), pod("db", "u2", "9")];
    source.start();
    await turn();
    api.items = [pod("db", "u2", "9")];
    api.version = "40";
    api.send("end");
    api.watchError = new ClusterApiError(410, "Expired", "too old resource version: 10 (30)", { method: "WATCH", path: "/api/v1/pods" });
    await turn();
    await turn();
    expect(api.lists.length).toBe(2);
    expect([...source.pods().keys()]).toEqual(["default/db"]);
    expect(api.watches.at(-1)!.resourceVersion).toBe("40");
    await source.stop();
  });

  test("an unreachable API server: not ready, retried on a capped doubling, one line down and one up", async () => {
    const { api, clock, lines, source } = setup();
    api.down = true;
    source.start();
    await turn();
    expect(source.ready).toBe(false);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const wait = clock.nextDueAt()! - clock.now();
      waits.push(wait);
      clock.step(wait);
      await turn();
    }
    expect(waits).toEqual([1000, 2000, 4000, 4000]);
    api.down = false;
    clock.step(clock.nextDueAt()! - clock.now());
    await turn();
    expect(source.ready).toBe(true);
    expect(lines.filter((line) => line.includes("lost the API server")).length).toBe(1);
    expect(lines.filter((line) => line.includes("answers again")).length).toBe(1);
    await source.stop();
  });

  test("a pod the runtime cannot run is kept aside with its message; a mirror pod is never run", async () => {
    const { api, source } = setup();
    api.items = [pod("nocmd", "u1", "9", {}, null), pod("stat-n1", "u2", "9", { annotations: { "kubernetes.io/config.mirror": "abc" } })];
    source.start();
    await turn();
    expect(source.pods().size).toBe(0);
    expect(source.refused().get("u1")!.message).toContain("command");
    expect([...source.mirrors().keys()]).toEqual(["default/stat-n1"]);
    await source.stop();
  });

  test("a burst of pods: the first change is told at once, those close behind it together once 100 ms have passed", async () => {
    const { api, clock, source, changes } = setup();
    source.start();
    await turn();
    expect(changes()).toBe(1);
    for (let i = 0; i < 50; i++) {
      api.send({ type: "ADDED", object: pod(`p${i}`, `u${i}`, String(11 + i)) });
      await turn();
    }
    expect(changes()).toBe(1);
    clock.step(100);
    await turn();
    expect(changes()).toBe(2);
    expect(source.pods().size).toBe(50);
    // Quiet for a while: the next change is told at once again.
    clock.step(1000);
    api.send({ type: "DELETED", object: pod("p0", "u0", "70") });
    await turn();
    expect(changes()).toBe(3);
    await source.stop();
  });

  test("an event admits only the pod it brought: the others keep their admission, a refusal is logged once, a changed pod is admitted anew", async () => {
    const { api, source, lines } = setup();
    api.items = [pod("web", "u1", "9"), pod("nocmd", "u2", "9", {}, null)];
    source.start();
    await turn();
    const web = source.pods().get("default/web")!;
    // The node's own status coming back for another pod, many times over.
    for (let version = 11; version < 20; version++) api.send({ type: "MODIFIED", object: { ...pod("nocmd", "u2", String(version), {}, null), status: { phase: "Failed" } } as ClusterPodObject });
    api.send({ type: "ADDED", object: pod("db", "u3", "20") });
    await turn();
    expect(source.pods().get("default/web")).toBe(web);
    expect(source.pods().get("default/db")!.uid).toBe("u3");
    expect(lines.filter((line) => line.startsWith("pod default/nocmd is not run")).length).toBe(1);
    api.send({ type: "MODIFIED", object: pod("web", "u1", "21", { labels: { tier: "front" } }) });
    await turn();
    expect(source.pods().get("default/web")!.labels).toEqual({ tier: "front" });
    api.send({ type: "DELETED", object: pod("nocmd", "u2", "22", {}, null) });
    await turn();
    expect(source.refused().size).toBe(0);
    await source.stop();
  });

  test("a pod's own status coming back keeps its admission; a change to its spec or deletion does not", async () => {
    const { api, source } = setup();
    api.items = [pod("web", "u1", "9")];
    source.start();
    await turn();
    const web = source.pods().get("default/web")!;
    // What each of the node's status patches brings back: a new object, a new resourceVersion, the same pod.
    api.send({ type: "MODIFIED", object: { ...pod("web", "u1", "11"), status: { phase: "Running" } } as ClusterPodObject });
    await turn();
    expect(source.pods().get("default/web")).toBe(web);
    const newImage = (object: ClusterPodObject) => ({ ...object, spec: { ...object.spec, containers: [{ name: "c", image: "busybox:2", command: ["sleep", "60"] }] } }) as ClusterPodObject;
    api.send({ type: "MODIFIED", object: newImage(pod("web", "u1", "12")) });
    await turn();
    expect(source.pods().get("default/web")).not.toBe(web);
    expect(source.pods().get("default/web")!.containers[0]!.image).toBe("busybox:2");
    api.send({ type: "MODIFIED", object: newImage(pod("web", "u1", "13", { deletionTimestamp: "2026-01-01T12:01:00Z", deletionGracePeriodSeconds: 30 })) });
    await turn();
    expect(source.pods().get("default/web")!.api?.deletion?.gracePeriodSeconds).toBe(30);
    await source.stop();
  });
});
