/**
 * The namespaces resource over a fake-runtime agent whose API writes go to its store, as `run`
 * wires them: which namespaces exist, create (validation, defaults, AlreadyExists), delete (the
 * immortal ones refused, a file's pods refused naming the files, API pods deleted gracefully with
 * the namespace Terminating until they are gone), NamespaceLifecycle on pod creates, and a restart.
 */
import { describe, expect, test } from "bun:test";
import { namespaceRoutes } from "../../src/api/resources/namespaces/namespaces-api.ts";
import { call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";
import { namespacesAgent } from "../namespace-fixtures.ts";
import { pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";

// The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
const apiPod = (name: string) => ({ metadata: { name }, spec: { automountServiceAccountToken: false, containers: [{ name: "app", image: "busybox", command: ["sleep", "60"] }] } });
const names = (list: any) => list.items.map((item: any) => item.metadata.name);

describe("which namespaces exist", () => {
  test("the four system namespaces, each one holding a pod, and the created ones, each with its name label, Active", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    await a.sync(pod({ name: "web", namespace: "prod" }));
    expect((await a.send("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } })).status).toBe(201);
    const list = await a.send("GET", "/api/v1/namespaces");
    expect(list.body.kind).toBe("NamespaceList");
    expect(names(list.body)).toEqual(["default", "kube-node-lease", "kube-public", "kube-system", "prod", "team-a"]);
    for (const item of list.body.items) {
      expect(item).toMatchObject({ kind: "Namespace", apiVersion: "v1", metadata: { labels: { "kubernetes.io/metadata.name": item.metadata.name } }, spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } });
      expect(item.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    }
    const table = await call(namespaceRoutes, "GET", "/api/v1/namespaces", a.api, { accept: TABLE_ACCEPT });
    expect(table.body.columnDefinitions.map((column: any) => column.name)).toEqual(["Name", "Status", "Age"]);
    expect(table.body.rows.map((row: any) => row.cells.slice(0, 2))).toEqual(["default", "kube-node-lease", "kube-public", "kube-system", "prod", "team-a"].map((name) => [name, "Active"]));
    expect(table.body.rows[5].object).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "team-a" } });
    const selected = await a.send("GET", "/api/v1/namespaces", undefined, { labelSelector: "kubernetes.io/metadata.name in (prod,team-a)" });
    expect(names(selected.body)).toEqual(["prod", "team-a"]);
    const prod = await a.send("GET", "/api/v1/namespaces/prod");
    expect(prod.body).toMatchObject({ kind: "Namespace", metadata: { name: "prod" }, status: { phase: "Active" } });
    const missing = await a.send("GET", "/api/v1/namespaces/nowhere");
    expect(missing).toMatchObject({ status: 404, body: { reason: "NotFound", message: 'namespaces "nowhere" not found', details: { name: "nowhere", kind: "namespaces" } } });
    a.h.close();
  });

  test("a created namespace is stored: it survives the agent's restart with its uid and labels", async () => {
    using dir = tempDir();
    const first = namespacesAgent(dir.path);
    const created = (await first.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a", labels: { tier: "dev" } } })).body;
    first.h.close();
    const second = namespacesAgent(dir.path);
    const served = (await second.send("GET", "/api/v1/namespaces/team-a")).body;
    expect(served.metadata).toMatchObject({ uid: created.metadata.uid, labels: { tier: "dev", "kubernetes.io/metadata.name": "team-a" }, creationTimestamp: created.metadata.creationTimestamp });
    second.h.close();
  });
});

describe("create", () => {
  test("201 with the defaults the API server sets; dryRun stores nothing; generateName; a bare body takes its kind from the URL", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    const created = await a.send("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", namespace: "ignored", uid: "mine" }, spec: {}, status: {} });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: "Namespace", metadata: { name: "team-a", labels: { "kubernetes.io/metadata.name": "team-a" } }, spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } });
    expect(created.body.metadata.uid).not.toBe("mine");
    expect(created.body.metadata.namespace).toBeUndefined();
    expect(Number(created.body.metadata.resourceVersion)).toBeGreaterThan(0);
    const dry = await a.send("POST", "/api/v1/namespaces", { metadata: { name: "dry" } }, { dryRun: "All" });
    expect(dry.status).toBe(201);
    expect((await a.send("GET", "/api/v1/namespaces/dry")).status).toBe(404);
    const generated = await a.send("POST", "/api/v1/namespaces", { metadata: { generateName: "tmp-" } });
    expect(generated.body.metadata.name).toMatch(/^tmp-[a-z0-9]{5}$/);
    a.h.close();
  });

  test("an invalid name is a 422 with its cause; an existing namespace (a system one, a created one) is AlreadyExists", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    const bad = await a.send("POST", "/api/v1/namespaces", { metadata: { name: "Team_A" } });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      `Namespace "Team_A" is invalid: metadata.name: Invalid value: "Team_A": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    );
    expect(bad.body.details).toMatchObject({ name: "Team_A", kind: "Namespace", causes: [{ reason: "FieldValueInvalid", field: "metadata.name" }] });
    const nameless = await a.send("POST", "/api/v1/namespaces", { metadata: {} });
    expect(nameless.body.message).toBe('Namespace "" is invalid: metadata.name: Required value: name or generateName is required');
    const existing = await a.send("POST", "/api/v1/namespaces", { metadata: { name: "default" } });
    expect(existing).toMatchObject({ status: 409, body: { reason: "AlreadyExists", message: 'namespaces "default" already exists', details: { name: "default", kind: "namespaces" } } });
    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
    expect((await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } })).status).toBe(409);
    const annotated = await a.send("POST", "/api/v1/namespaces", { metadata: { name: "big", annotations: { "example.com/big": "x".repeat(300 * 1024) } } });
    expect(annotated.status).toBe(422);
    expect(annotated.body.message).toBe('Namespace "big" is invalid: metadata.annotations: Too long: must have at most 262144 bytes');
    expect(annotated.body.details.causes).toEqual([{ reason: "FieldValueTooLong", message: "Too long: must have at most 262144 bytes", field: "metadata.annotations" }]);
    const wrongKind = await a.send("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Pod", metadata: { name: "x" } });
    expect(wrongKind.body.message).toBe('Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to (core.Namespace): unknown conversion');
    a.h.close();
  });

  test("a pod created in a namespace that does not exist is the NamespaceLifecycle NotFound; in a created one it is accepted", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    const refused = await a.send("POST", "/api/v1/namespaces/team-a/pods", apiPod("web"));
    expect(refused).toMatchObject({ status: 404, body: { reason: "NotFound", message: 'namespaces "team-a" not found', details: { name: "team-a", kind: "namespaces" } } });
    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
    expect((await a.send("POST", "/api/v1/namespaces/team-a/pods", apiPod("web"))).status).toBe(201);
    a.h.close();
  });
});

/** An agent with no pods yet. */
function a0(dir: string) {
  return namespacesAgent(dir);
}

describe("delete", () => {
  test("the immortal namespaces and kube-node-lease are Forbidden; an unknown one NotFound", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      const refused = await a.send("DELETE", `/api/v1/namespaces/${name}`);
      expect(refused).toMatchObject({ status: 403, body: { reason: "Forbidden", message: `namespaces "${name}" is forbidden: this namespace may not be deleted`, details: { name, kind: "namespaces" } } });
    }
    expect((await a.send("DELETE", "/api/v1/namespaces/nowhere")).body).toMatchObject({ code: 404, message: 'namespaces "nowhere" not found' });
    a.h.close();
  });

  test("a namespace holding manifest files' pods is refused, naming the files, one cause per pod", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    await a.sync(pod({ name: "web", namespace: "prod" }), pod({ name: "db", namespace: "prod" }));
    const refused = await a.send("DELETE", "/api/v1/namespaces/prod");
    expect(refused.status).toBe(405);
    expect(refused.body).toMatchObject({
      reason: "MethodNotAllowed",
      message: "namespace prod holds pods from manifest files (/manifests/db.yaml, /manifests/web.yaml): remove the files to delete their pods, then delete the namespace",
      details: { name: "prod", kind: "namespaces", causes: [{ message: "pod db-lab comes from the manifest file /manifests/db.yaml" }, { message: "pod web-lab comes from the manifest file /manifests/web.yaml" }] },
    });
    expect((await a.send("GET", "/api/v1/namespaces/prod")).body.status.phase).toBe("Active");
    a.h.close();
  });

  test("its API pods are deleted with their own grace; it is Terminating, refuses new pods, and is gone with its last pod", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
    await a.send("POST", "/api/v1/namespaces/team-a/pods", { ...apiPod("web"), spec: { ...apiPod("web").spec, terminationGracePeriodSeconds: 5 } });
    // db ignores SIGTERM: it is killed when its 30 s grace runs out.
    a.h.runtime.behaviours.set("slow", { ignoreSigterm: true });
    await a.send("POST", "/api/v1/namespaces/team-a/pods", { metadata: { name: "db" }, spec: { automountServiceAccountToken: false, containers: [{ name: "slow", image: "busybox", command: ["sleep", "60"] }] } });
    await a.sync();
    await a.h.advance(1);
    expect(a.h.kubelet.pods.get("team-a/web")?.app[0]?.state).toBe("running");

    const deleted = await a.send("DELETE", "/api/v1/namespaces/team-a", { propagationPolicy: "Background" });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: "Namespace", metadata: { name: "team-a" }, status: { phase: "Terminating" } });
    expect(deleted.body.metadata.deletionTimestamp).toBeDefined();
    expect(a.sources.writes.store.list().map((p) => [p.name, p.deletion?.gracePeriodSeconds])).toEqual([["db", 30], ["web", 5]]);
    const table = await call(namespaceRoutes, "GET", "/api/v1/namespaces/team-a", a.api, { accept: TABLE_ACCEPT });
    expect(table.body.rows[0].cells.slice(0, 2)).toEqual(["team-a", "Terminating"]);
    const late = await a.send("POST", "/api/v1/namespaces/team-a/pods", apiPod("late"));
    expect(late).toMatchObject({
      status: 403,
      body: {
        reason: "Forbidden",
        message: 'pods "late" is forbidden: unable to create new content in namespace team-a because it is being terminated',
        details: { name: "late", kind: "pods", causes: [{ reason: "NamespaceTerminating", message: "namespace team-a is being terminated", field: "metadata.namespace" }] },
      },
    });

    await a.sync();
    await a.h.advance(6);
    await a.sync();
    expect(a.h.kubelet.pods.has("team-a/web")).toBe(false);
    expect(a.h.kubelet.pods.has("team-a/db")).toBe(true);
    expect((await a.send("GET", "/api/v1/namespaces/team-a")).body.status.phase).toBe("Terminating");
    await a.h.advance(30);
    await a.sync();
    expect(a.sources.writes.store.list()).toEqual([]);
    expect((await a.send("GET", "/api/v1/namespaces/team-a")).status).toBe(404);
    expect(names((await a.send("GET", "/api/v1/namespaces")).body)).not.toContain("team-a");
    // The name is free again.
    expect((await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } })).status).toBe(201);
    a.h.close();
  });

  test("an empty namespace is gone at once; dryRun deletes nothing; a uid precondition that does not hold is a Conflict", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    const created = (await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } })).body;
    const dry = await a.send("DELETE", "/api/v1/namespaces/team-a", undefined, { dryRun: "All" });
    expect(dry.body.status.phase).toBe("Terminating");
    expect((await a.send("GET", "/api/v1/namespaces/team-a")).body.status.phase).toBe("Active");
    const stale = await a.send("DELETE", "/api/v1/namespaces/team-a", { preconditions: { uid: "other" } });
    expect(stale).toMatchObject({ status: 409, body: { reason: "Conflict", message: `Operation cannot be fulfilled on namespaces "team-a": Precondition failed: UID in precondition: other, UID in object meta: ${created.metadata.uid}` } });
    const deleted = await a.send("DELETE", "/api/v1/namespaces/team-a", { preconditions: { uid: created.metadata.uid } });
    expect(deleted.body.status.phase).toBe("Terminating");
    expect((await a.send("GET", "/api/v1/namespaces/team-a")).status).toBe(404);
    a.h.close();
  });
});

describe("under serve (no loop)", () => {
  test("create and delete are refused with 405; reads work", async () => {
    using dir = tempDir();
    const a = a0(dir.path);
    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
    const readOnly = { ...a.h.api };
    const create = await call(namespaceRoutes, "POST", "/api/v1/namespaces", readOnly, { body: JSON.stringify({ metadata: { name: "b" } }) });
    expect(create).toMatchObject({ status: 405, body: { reason: "MethodNotAllowed", details: { kind: "namespaces" } } });
    expect(create.body.message).toContain("minikubelet run");
    expect((await call(namespaceRoutes, "DELETE", "/api/v1/namespaces/team-a", readOnly)).status).toBe(405);
    expect((await call(namespaceRoutes, "GET", "/api/v1/namespaces/team-a", readOnly)).status).toBe(200);
    a.h.close();
  });
});
