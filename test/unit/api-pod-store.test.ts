import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ApiPodWriteError, SqliteApiPodStore, type NewApiPod } from "../../src/store/api-pod-store.ts";
import { openAgentDatabase, openReadonlyDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { podObject, unsyncedStatus } from "../../src/v1/pod-object.ts";
import { FakeClock } from "../fake-clock.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

function newPod(name: string, namespace = "default"): NewApiPod {
  return {
    uid: `uid-${namespace}-${name}`,
    namespace,
    name,
    createdAt: 1_000,
    object: { apiVersion: "v1", kind: "Pod", metadata: { name, namespace }, spec: { containers: [{ name: "app", image: "busybox" }] } },
  };
}

function openStores(path: string) {
  const agent = openAgentDatabase(join(path, "state.db"));
  const commits: number[] = [];
  const store = new SqliteStore({ db: agent.db, clock: new FakeClock(), onCommit: (revision) => commits.push(revision) });
  const apiPods = new SqliteApiPodStore(agent.db, store.revisions);
  return { agent, store, apiPods, commits };
}

function refusal(write: () => unknown): ApiPodWriteError {
  try {
    write();
  } catch (error) {
    if (error instanceof ApiPodWriteError) return error;
    throw error;
  }
  throw new Error("the write was accepted");
}

describe("API pods in the store (migrations/0005)", () => {
  test("a create takes the next revision of the shared counter, is announced after its commit, and survives a reopen", () => {
    using dir = tempDir();
    const first = openStores(dir.path);
    first.store.saveEvents([{ at: 1, type: "Normal", reason: "Started", podKey: "default/x", namespace: "default", pod: "x", podUid: "x", container: "", message: "m" }]);
    const before = first.store.revisions.current;
    const web = first.apiPods.create(newPod("web"));
    expect(web.resourceVersion).toBe(before + 1);
    expect(first.commits.at(-1)).toBe(web.resourceVersion);
    first.agent.close();

    const again = openStores(dir.path);
    expect(again.apiPods.get("default", "web")).toEqual({ ...newPod("web"), resourceVersion: web.resourceVersion });
    // The counter starts above the API pod's version: a revision is never handed out twice.
    expect(again.store.revisions.current).toBe(web.resourceVersion);
    const reader = new StoreReader(openReadonlyDatabase(join(dir.path, "state.db")));
    expect(reader.revision()).toBe(web.resourceVersion);
    reader.db.close();
    again.agent.close();
  });

  test("a name taken in the namespace is AlreadyExists and writes nothing; another namespace is free", () => {
    using dir = tempDir();
    const { agent, store, apiPods, commits } = openStores(dir.path);
    apiPods.create(newPod("web"));
    const revision = store.revisions.current;
    const error = refusal(() => apiPods.create({ ...newPod("web"), uid: "other" }));
    expect(error.reason).toBe("AlreadyExists");
    expect(error.message).toBe('pods "web" already exists');
    expect(store.revisions.current).toBe(revision);
    expect(commits.at(-1)).toBe(revision);
    apiPods.create(newPod("web", "demo"));
    expect(apiPods.list().map((p) => `${p.namespace}/${p.name}`)).toEqual(["default/web", "demo/web"]);
    agent.close();
  });

  test("an update with a stale resourceVersion is a Conflict; with the current one it stores the object", () => {
    using dir = tempDir();
    const { agent, apiPods } = openStores(dir.path);
    const created = apiPods.create(newPod("web"));
    const changed = { ...created.object, metadata: { name: "web", namespace: "default", labels: { app: "web" } } };
    const updated = apiPods.update("default", "web", created.resourceVersion, changed);
    expect(updated.resourceVersion).toBeGreaterThan(created.resourceVersion);
    expect(apiPods.get("default", "web")!.object).toEqual(changed);
    expect(refusal(() => apiPods.update("default", "web", created.resourceVersion, created.object)).reason).toBe("Conflict");
    expect(refusal(() => apiPods.update("default", "nope", undefined, created.object)).reason).toBe("NotFound");
    expect(apiPods.update("default", "web", undefined, created.object).object).toEqual(created.object);
    agent.close();
  });

  test("the version a client sees is the newer of the row and the pod's checkpointed status", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    const apiPods = new SqliteApiPodStore(h.agent.db, h.store.revisions);
    const web = pod({ name: "web", namespace: "default", node: "", containers: [container("app")] });
    const stored = apiPods.create({ ...newPod("web"), uid: web.uid });
    await h.kubelet.sync(desired(web));
    const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
    const served = reader.livePods({ name: "web" })[0]!.revision;
    expect(served).toBeGreaterThan(stored.resourceVersion);
    expect(apiPods.resourceVersion("default", "web")).toBe(served);
    // The loop's status write moved the pod on: the version read before it is stale.
    expect(refusal(() => apiPods.update("default", "web", stored.resourceVersion, stored.object)).reason).toBe("Conflict");
    const updated = apiPods.update("default", "web", served, stored.object);
    expect(reader.livePods({ name: "web" })[0]!.revision).toBe(updated.resourceVersion);
    reader.db.close();
    h.agent.close();
  });

  test("a pod created but not yet checkpointed by the loop is served Pending, then as the loop reports it", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    const apiPods = new SqliteApiPodStore(h.agent.db, h.store.revisions);
    const web = pod({ name: "web", namespace: "default", node: "", containers: [container("app")] });
    // The API's create draws the pod it serves until the loop reports (pods-create.ts), and saves it with the row.
    const served = podObject(web, { createdAt: 0 }, unsyncedStatus(web)) as unknown as Record<string, unknown>;
    const stored = apiPods.create({ ...newPod("web"), uid: web.uid, served });
    const reader = new StoreReader(openReadonlyDatabase(h.dbPath));
    const [pending] = reader.livePods({ namespace: "default" });
    expect(pending).toMatchObject({ uid: web.uid, name: "web", revision: stored.resourceVersion, deletedAt: null });
    expect(pending!.object.status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
    expect(pending!.object.metadata.name).toBe("web");
    await h.kubelet.sync(desired(web));
    const rows = reader.livePods({ namespace: "default" });
    expect(rows.map((row) => row.uid)).toEqual([web.uid]);
    expect(rows[0]!.object.status!.phase).toBe("Running");
    reader.db.close();
    h.agent.close();
  });

  test("markDeleting checks the preconditions, keeps the shorter grace, and remove drops only that incarnation", () => {
    using dir = tempDir();
    const { agent, apiPods } = openStores(dir.path);
    const created = apiPods.create(newPod("web"));
    expect(refusal(() => apiPods.markDeleting("default", "web", { requestedAt: 5, gracePeriodSeconds: 30 }, { uid: "someone-else" })).message).toBe(
      `Precondition failed: UID in precondition: someone-else, UID in object meta: ${created.uid}`,
    );
    expect(refusal(() => apiPods.markDeleting("default", "web", { requestedAt: 5, gracePeriodSeconds: 30 }, { resourceVersion: "999" })).message).toBe(
      `Precondition failed: ResourceVersion in precondition: 999, ResourceVersion in object meta: ${created.resourceVersion}`,
    );
    expect(apiPods.get("default", "web")!.deletion).toBeUndefined();
    const deleting = apiPods.markDeleting("default", "web", { requestedAt: 5, gracePeriodSeconds: 30 }, { uid: created.uid, resourceVersion: String(created.resourceVersion) });
    expect(deleting.deletion).toEqual({ requestedAt: 5, gracePeriodSeconds: 30 });
    expect(apiPods.markDeleting("default", "web", { requestedAt: 9, gracePeriodSeconds: 60 }).deletion).toEqual({ requestedAt: 5, gracePeriodSeconds: 30 });
    expect(apiPods.markDeleting("default", "web", { requestedAt: 9, gracePeriodSeconds: 0 }).deletion).toEqual({ requestedAt: 5, gracePeriodSeconds: 0 });
    expect(apiPods.get("default", "web")!.deletion).toEqual({ requestedAt: 5, gracePeriodSeconds: 0 });
    expect(apiPods.remove("default", "web", "another-incarnation")).toBe(false);
    expect(apiPods.remove("default", "web", created.uid)).toBe(true);
    expect(apiPods.get("default", "web")).toBeUndefined();
    expect(refusal(() => apiPods.markDeleting("default", "web", { requestedAt: 9, gracePeriodSeconds: 1 })).reason).toBe("NotFound");
    agent.close();
  });
});
