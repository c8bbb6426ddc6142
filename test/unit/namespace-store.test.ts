import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SqliteApiPodStore, type NewApiPod } from "../../src/store/api-pod-store.ts";
import { NamespaceWriteError, SqliteNamespaceStore, type NewNamespace } from "../../src/store/namespace-store.ts";
import { openAgentDatabase, openReadonlyDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

function openStores(path: string) {
  const agent = openAgentDatabase(join(path, "state.db"));
  const commits: number[] = [];
  const store = new SqliteStore({ db: agent.db, clock: new FakeClock(), onCommit: (revision) => commits.push(revision) });
  const namespaces = new SqliteNamespaceStore(agent.db, store.revisions);
  const apiPods = new SqliteApiPodStore(agent.db, store.revisions, namespaces);
  return { agent, store, namespaces, apiPods, commits };
}

const demo = (uid = "uid-demo"): NewNamespace => ({ name: "demo", uid, createdAt: 5_000, object: { metadata: { labels: { team: "a" } }, spec: { finalizers: ["kubernetes"] } } });

function apiPod(name: string, namespace = "demo"): NewApiPod {
  return { uid: `uid-${name}`, namespace, name, createdAt: 6_000, object: { apiVersion: "v1", kind: "Pod", metadata: { name, namespace }, spec: { containers: [{ name: "app", image: "busybox" }] } } };
}

describe("namespaces in the store (migrations/0010)", () => {
  test("a create takes the next shared revision, is announced after its commit, survives a reopen; a second create of the name is AlreadyExists", () => {
    using dir = tempDir();
    const first = openStores(dir.path);
    const before = first.store.revisions.current;
    const created = first.namespaces.create(demo());
    expect(created).toMatchObject({ name: "demo", uid: "uid-demo", createdAt: 5_000, deleted: false, revision: before + 1, createdRevision: before + 1 });
    expect(created.deletionRequestedAt).toBeUndefined();
    expect(first.commits).toEqual([before + 1]);
    expect(() => first.namespaces.create(demo("other"))).toThrow(new NamespaceWriteError("AlreadyExists", "demo"));
    expect(first.store.revisions.current).toBe(before + 1);
    first.agent.close();

    const second = openStores(dir.path);
    expect(second.namespaces.get("demo")).toMatchObject({ uid: "uid-demo", object: { metadata: { labels: { team: "a" } } } });
    // The counter starts above the namespace's revision: no revision is handed out twice.
    expect(second.store.revisions.current).toBe(before + 1);
    const reader = new StoreReader(openReadonlyDatabase(join(dir.path, "state.db")));
    expect(reader.revision()).toBe(before + 1);
    reader.db.close();
    second.agent.close();
  });

  test("a delete marks it Terminating and deletes its API pods in one transaction, one commit; the last pod's removal finishes it in its own", () => {
    using dir = tempDir();
    const s = openStores(dir.path);
    s.namespaces.create(demo());
    s.apiPods.create(apiPod("web"));
    s.apiPods.create(apiPod("db"));
    s.commits.length = 0;
    const deleting = s.namespaces.markDeleting(demo(), 9_000, () => {
      for (const pod of s.apiPods.list()) s.apiPods.markDeleting(pod.namespace, pod.name, { requestedAt: 9_000, gracePeriodSeconds: 30 });
    });
    expect(deleting).toMatchObject({ name: "demo", deletionRequestedAt: 9_000, deleted: false });
    expect(s.commits).toEqual([s.store.revisions.current]);
    expect(s.apiPods.list().map((pod) => pod.deletion?.requestedAt)).toEqual([9_000, 9_000]);
    // A second delete keeps the first's time.
    expect(s.namespaces.markDeleting(demo(), 12_000, () => {}).deletionRequestedAt).toBe(9_000);

    expect(s.apiPods.remove("demo", "web", "uid-web")).toBe(true);
    expect(s.namespaces.get("demo")?.deletionRequestedAt).toBe(9_000);
    s.commits.length = 0;
    expect(s.apiPods.remove("demo", "db", "uid-db")).toBe(true);
    expect(s.namespaces.get("demo")).toBeUndefined();
    expect(s.commits).toEqual([s.store.revisions.current]);
    s.agent.close();
  });

  test("an empty namespace is gone at once; one that had no row (it held pods) gets a Terminating row; a create revives a gone name", () => {
    using dir = tempDir();
    const s = openStores(dir.path);
    s.namespaces.create(demo());
    expect(s.namespaces.markDeleting(demo(), 9_000, () => {})).toMatchObject({ deleted: true, deletionRequestedAt: 9_000 });
    expect(s.namespaces.get("demo")).toBeUndefined();

    s.apiPods.create(apiPod("web", "legacy"));
    const legacy = s.namespaces.markDeleting({ name: "legacy", uid: "uid-legacy", createdAt: 1_000, object: {} }, 9_500, () => {});
    expect(legacy).toMatchObject({ name: "legacy", uid: "uid-legacy", deletionRequestedAt: 9_500, deleted: false });

    const revived = s.namespaces.create(demo("uid-again"));
    expect(revived).toMatchObject({ uid: "uid-again", deleted: false, createdRevision: revived.revision });
    expect(revived.deletionRequestedAt).toBeUndefined();
    s.agent.close();
  });

  test("a delete whose content fails writes nothing and gives its revisions back", () => {
    using dir = tempDir();
    const s = openStores(dir.path);
    s.namespaces.create(demo());
    s.apiPods.create(apiPod("web"));
    const before = s.store.revisions.current;
    s.commits.length = 0;
    expect(() =>
      s.namespaces.markDeleting(demo(), 9_000, () => {
        s.apiPods.markDeleting("demo", "web", { requestedAt: 9_000, gracePeriodSeconds: 30 });
        throw new Error("disk full");
      }),
    ).toThrow("disk full");
    expect(s.namespaces.get("demo")?.deletionRequestedAt).toBeUndefined();
    expect(s.apiPods.get("demo", "web")?.deletion).toBeUndefined();
    expect(s.store.revisions.current).toBe(before);
    expect(s.commits).toEqual([]);
    s.agent.close();
  });
});
