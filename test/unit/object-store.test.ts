/**
 * The ConfigMaps, Secrets and ServiceAccounts table (store/object-store.ts): a create takes a
 * revision from the counter the pods use, a stale update is the API server's Conflict, a delete
 * keeps the row for watches and a create revives it, a namespace's delete takes its objects, and
 * each committed write is told to the loop's listener, a rolled-back one never.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { objectsChangedSince, liveObjects } from "../../src/store/object-reads.ts";
import { ObjectWriteError, SqliteObjectStore, type ObjectKey } from "../../src/store/object-store.ts";
import { openAgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

function setup() {
  const dir = tempDir();
  const agent = openAgentDatabase(join(dir.path, "state.db"));
  const store = new SqliteStore({ db: agent.db, clock: new FakeClock() });
  const objects = new SqliteObjectStore(agent.db, store.revisions);
  const told: string[] = [];
  objects.onChange((key) => told.push(`${key.resource}/${key.namespace}/${key.name}`));
  return { agent, store, objects, told, [Symbol.dispose]: () => (agent.close(), dir[Symbol.dispose]()) };
}

const CM: ObjectKey = { resource: "configmaps", namespace: "default", name: "settings" };

test("create, update at the revision read, delete: each a revision of the shared counter, each told once committed", () => {
  using s = setup();
  const before = s.store.revisions.current;
  const created = s.objects.create(CM, "uid-1", { metadata: { name: "settings" }, data: { a: "1" } });
  expect(created).toMatchObject({ uid: "uid-1", revision: before + 1, createdRevision: before + 1, deleted: false, object: { data: { a: "1" } } });
  const updated = s.objects.update(CM, created.revision, { metadata: { name: "settings" }, data: { a: "2" } });
  expect(updated).toMatchObject({ revision: before + 2, createdRevision: before + 1, object: { data: { a: "2" } } });
  const deleted = s.objects.delete(CM);
  expect(deleted.revision).toBe(before + 2);
  expect(s.objects.get(CM)).toBeUndefined();
  expect(liveObjects(s.agent.db, "configmaps")).toEqual([]);
  // The watch still reads the deletion after the revision it last saw.
  expect(objectsChangedSince(s.agent.db, "configmaps", before + 2, 10).map((row) => [row.deleted, row.revision])).toEqual([[true, before + 3]]);
  expect(s.told).toEqual(["configmaps/default/settings", "configmaps/default/settings", "configmaps/default/settings"]);
});

test("the API server's refusals: AlreadyExists, a stale revision's Conflict, NotFound, a uid precondition; nothing told, nothing written", () => {
  using s = setup();
  const created = s.objects.create(CM, "uid-1", { data: {} });
  s.told.length = 0;
  const refusal = (write: () => unknown) => {
    try {
      write();
    } catch (error) {
      if (error instanceof ObjectWriteError) return [error.reason, error.message];
    }
    return undefined;
  };
  expect(refusal(() => s.objects.create(CM, "uid-2", {}))).toEqual(["AlreadyExists", 'configmaps "settings" already exists']);
  expect(refusal(() => s.objects.update(CM, created.revision - 1, {}))).toEqual([
    "Conflict",
    'Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again',
  ]);
  expect(refusal(() => s.objects.update({ ...CM, name: "other" }, undefined, {}))).toEqual(["NotFound", 'configmaps "other" not found']);
  expect(refusal(() => s.objects.delete(CM, "uid-2"))).toEqual(["Conflict", "Precondition failed: UID in precondition: uid-2, UID in object meta: uid-1"]);
  expect(s.told).toEqual([]);
  expect(s.store.revisions.current).toBe(created.revision);
  expect(s.objects.get(CM)).toMatchObject({ uid: "uid-1", revision: created.revision });
});

test("a deleted name is revived by the next create, with a new uid and creation revision", () => {
  using s = setup();
  s.objects.create(CM, "uid-1", {});
  s.objects.delete(CM);
  const revived = s.objects.create(CM, "uid-2", { data: { b: "2" } });
  expect(revived).toMatchObject({ uid: "uid-2", deleted: false, createdRevision: revived.revision, object: { data: { b: "2" } } });
});

test("deleteNamespace takes every live object of the namespace and no other's", () => {
  using s = setup();
  s.objects.create(CM, "u1", {});
  s.objects.create({ resource: "secrets", namespace: "default", name: "db" }, "u2", {});
  s.objects.create({ resource: "secrets", namespace: "other", name: "db" }, "u3", {});
  s.told.length = 0;
  s.objects.deleteNamespace("default");
  expect(liveObjects(s.agent.db, "secrets").map((row) => `${row.namespace}/${row.name}`)).toEqual(["other/db"]);
  expect(liveObjects(s.agent.db, "configmaps")).toEqual([]);
  expect(s.told.sort()).toEqual(["configmaps/default/settings", "secrets/default/db"]);
});
