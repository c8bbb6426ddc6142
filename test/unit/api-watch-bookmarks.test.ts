/**
 * Periodic BOOKMARK events on a watch that allows them, as the API server sends one about every
 * minute: each carries only the resourceVersion the client has seen everything up to, so a client
 * that reconnects resumes from there instead of relisting. Stepped on the harness's fake clock.
 */
import { expect, test } from "bun:test";
import { BOOKMARK_INTERVAL_MS, watchOrList } from "../../src/api/watch/watch.ts";
import { podKind } from "../../src/api/resources/watch-kinds.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { apiHarness, apiRequest, readWatch, settle } from "../api-watch-fixtures.ts";

const neverList = () => {
  throw new Error("the list handler ran for a watch");
};

function watchPods(h: ReturnType<typeof apiHarness>, query: string) {
  return watchOrList(apiRequest(`/api/v1/namespaces/demo/pods?${query}`, { params: { namespace: "demo" } }), h.api, podKind, neverList) as Response;
}

test("a watch that allows bookmarks gets one every BOOKMARK_INTERVAL_MS, at a version no older than the last change it was sent", async () => {
  using dir = tempDir();
  const h = apiHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const watch = readWatch(watchPods(h, "allowWatchBookmarks=true&watch=true"));
  await settle();
  const types = () => watch.lines.map((line) => line.type);
  expect(types()).toEqual(["ADDED"]);
  // From RV 0 the watch has everything up to the revision it started at.
  const startedAt = String(h.api.store.revision());

  h.clock.step(BOOKMARK_INTERVAL_MS - 1);
  await settle();
  expect(types()).toEqual(["ADDED"]);
  h.clock.step(1);
  await settle();
  expect(types()).toEqual(["ADDED", "BOOKMARK"]);
  expect(watch.lines[1]!.object).toEqual({ kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: startedAt } });

  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] }), pod({ name: "db", containers: [container("db")] })));
  await h.advance(1);
  await settle();
  const last = Number(watch.lines.at(-1)!.object.metadata.resourceVersion);
  expect(last).toBeGreaterThan(Number(startedAt));
  h.clock.step(BOOKMARK_INTERVAL_MS);
  await settle();
  const bookmark = watch.lines.at(-1)!;
  expect(bookmark.type).toBe("BOOKMARK");
  expect(Number(bookmark.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(last);
  expect(Number(bookmark.object.metadata.resourceVersion)).toBeLessThanOrEqual(h.api.store.revision());
  expect(watch.state.ended).toBe(false);
  h.close();
});

test("a watch that did not ask for bookmarks gets none, and a closed watch leaves no bookmark timer behind", async () => {
  using dir = tempDir();
  const h = apiHarness(dir.path);
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(1);
  const plain = readWatch(watchPods(h, "watch=true"));
  await settle();
  h.clock.step(3 * BOOKMARK_INTERVAL_MS);
  await settle();
  expect(plain.lines.map((line) => line.type)).toEqual(["ADDED"]);

  const timers = h.clock.pendingTimers();
  const bookmarked = readWatch(watchPods(h, "allowWatchBookmarks=true&watch=true"));
  await settle();
  // Its bookmark timer and its lifetime (--min-request-timeout, no timeoutSeconds asked).
  expect(h.clock.pendingTimers()).toBe(timers + 2);
  await bookmarked.cancel();
  await settle();
  expect(h.clock.pendingTimers()).toBe(timers);
  h.close();
});
