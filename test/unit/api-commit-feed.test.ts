/**
 * Watches hear each commit: under `run` the agent's store tells the feed the revision it just
 * committed; under `serve` a watcher on the database's files tells it what another process wrote.
 */
import { expect, test } from "bun:test";
import { CommitBroadcast, watchDatabase } from "../../src/api/commit-feed.ts";
import { openReadonlyDatabase } from "../../src/store/open.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

test("the agent's store publishes each commit's revision, as a reader then sees it, and nothing for a pass that changed nothing", async () => {
  using dir = tempDir();
  const published: number[] = [];
  const commits = new CommitBroadcast();
  commits.subscribe((revision) => published.push(revision));
  const h = storeHarness(dir.path, { onCommit: (revision) => commits.publish(revision) });
  const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
  const seen: number[] = [];
  commits.subscribe(() => seen.push(reader.revision()));

  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(5);
  expect(published.length).toBeGreaterThan(0);
  expect(published).toEqual([...published].sort((a, b) => a - b));
  // Told after the commit, never before: a reader on its own connection already sees the revision.
  expect(seen).toEqual(published);
  expect(published.at(-1)).toBe(reader.revision());

  const before = published.length;
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(5);
  expect(published.length).toBe(before);
  reader.db.close();
  h.agent.close();
});

test("a listener that throws does not keep the others from hearing the commit", () => {
  const commits = new CommitBroadcast();
  const heard: number[] = [];
  commits.subscribe(() => {
    throw new Error("a broken watch");
  });
  commits.subscribe((revision) => heard.push(revision));
  commits.publish(7);
  expect(heard).toEqual([7]);
});

test("under serve, a commit by another process reaches the feed through the database's files", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path);
  const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
  const commits = new CommitBroadcast();
  const heard: number[] = [];
  const { promise: changed, resolve } = Promise.withResolvers<void>();
  commits.subscribe((revision) => (heard.push(revision), resolve()));
  const watching = watchDatabase(commits, { dbPath: h.dbPath, revision: () => reader.revision(), pollMs: 60_000 });
  try {
    await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
    await changed;
    expect(heard.at(-1)).toBeGreaterThan(0);
  } finally {
    watching.close();
    reader.db.close();
    h.agent.close();
  }
});
