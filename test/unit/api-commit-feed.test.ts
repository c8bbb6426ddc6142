/**
 * Watches hear each commit: under `run` the agent's store tells the feed the revision it just
 * committed; under `serve` a watcher on the database's files tells it what another process wrote.
 */
import { expect, test } from "bun:test";
import { CommitBroadcast, watchDatabase } from "../../src/api/watch/commit-feed.ts";
import { openReadonlyDatabase } from "../../src/store/open.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const nextTick = () => new Promise((resolve) => setImmediate(resolve));

test("the agent's store tells each commit's revision, which a reader then sees, and nothing for a pass that changed nothing", async () => {
  using dir = tempDir();
  const committed: number[] = [];
  const commits = new CommitBroadcast();
  const h = storeHarness(dir.path, { onCommit: (revision) => (committed.push(revision), commits.publish(revision)) });
  const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
  const heard: { revision: number; visible: number }[] = [];
  commits.subscribe((revision) => heard.push({ revision, visible: reader.revision() }));

  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(5);
  await nextTick();
  expect(committed.length).toBeGreaterThan(0);
  expect(committed).toEqual([...committed].sort((a, b) => a - b));
  // Heard after the commit, never before: a reader on its own connection already sees the revision.
  expect(heard.at(-1)).toEqual({ revision: committed.at(-1)!, visible: committed.at(-1)! });

  const before = committed.length;
  await h.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
  await h.advance(5);
  expect(committed.length).toBe(before);
  reader.db.close();
  h.agent.close();
});

test("listeners hear a burst of commits once, with the newest revision, after the committing code returned", async () => {
  const commits = new CommitBroadcast();
  const heard: number[] = [];
  commits.subscribe((revision) => heard.push(revision));
  commits.publish(3);
  commits.publish(5);
  commits.publish(4);
  expect(heard).toEqual([]);
  await nextTick();
  expect(heard).toEqual([5]);
  commits.publish(6);
  await nextTick();
  expect(heard).toEqual([5, 6]);
});

test("a listener that throws does not keep the others from hearing the commit", async () => {
  const commits = new CommitBroadcast();
  const heard: number[] = [];
  commits.subscribe(() => {
    throw new Error("a broken watch");
  });
  commits.subscribe((revision) => heard.push(revision));
  commits.publish(7);
  await nextTick();
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
