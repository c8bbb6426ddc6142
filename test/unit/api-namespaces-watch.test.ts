/**
 * `kubectl get ns -w` and `kubectl delete ns`'s wait: the namespaces watch. A created namespace is
 * ADDED, its delete MODIFIED (Terminating), its end DELETED; one that exists because it holds pods
 * is ADDED with its first pod and DELETED with its last, and the pods' other changes are none of it.
 */
import { describe, expect, test } from "bun:test";
import { namespaceRoutes } from "../../src/api/resources/namespaces/namespaces-api.ts";
import { deprecatedWatchRoutes } from "../../src/api/resources/watch-paths.ts";
import { apiRequest, readWatch, settle, TABLE_ACCEPT, type WatchLine } from "../api-watch-fixtures.ts";
import { namespacesAgent } from "../namespace-fixtures.ts";
import { pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";

type Agent = ReturnType<typeof namespacesAgent>;

function watch(a: Agent, query: string, accept?: string) {
  const request = apiRequest(`/api/v1/namespaces?${query}`, accept ? { accept } : {});
  return readWatch(namespaceRoutes[0]!.handle(request, a.api) as Response);
}

const line = (entry: WatchLine) => `${entry.type} ${entry.object.metadata.name} ${entry.object.status.phase}`;

describe("namespaces watch", () => {
  test("from RV 0: ADDED for each namespace; then create, a file pod's namespace, its removal, and a delete to the end", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    const w = watch(a, "watch=true");
    await settle();
    expect(w.lines.map(line)).toEqual(["ADDED default Active", "ADDED kube-node-lease Active", "ADDED kube-public Active", "ADDED kube-system Active"]);
    w.lines.length = 0;

    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
    await a.sync(pod({ name: "web", namespace: "prod" }));
    await a.h.advance(1);
    await a.sync();
    await settle();
    // The pod's start and readiness are changes of the pod, not of namespace prod.
    expect(w.lines.map(line)).toEqual(["ADDED team-a Active", "ADDED prod Active"]);

    a.setFiles();
    await a.sync();
    await a.h.advance(31);
    await a.sync();
    await a.send("DELETE", "/api/v1/namespaces/team-a");
    await settle();
    // An empty namespace is Terminating and gone in one transaction: its one event is DELETED.
    expect(w.lines.map(line)).toEqual(["ADDED team-a Active", "ADDED prod Active", "DELETED prod Active", "DELETED team-a Terminating"]);
    const versions = w.lines.map((entry) => Number(entry.object.metadata.resourceVersion));
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    expect(w.state.ended).toBe(false);
    a.h.close();
  });

  test("from the list's RV, a deleted namespace's DELETED ends kubectl delete's wait; a field selector on its name watches it alone", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
    await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-b" } });
    const rv = a.api.store.revision();
    await a.send("DELETE", "/api/v1/namespaces/team-a");
    const w = watch(a, `watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dteam-a`);
    await settle();
    expect(w.lines.map(line)).toEqual(["DELETED team-a Terminating"]);
    a.h.close();
  });

  test("as=Table: each event a one-row Table with the namespace columns; the deprecated path /api/v1/watch/namespaces serves it too", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    const w = watch(a, "watch=true&fieldSelector=metadata.name%3Ddefault", TABLE_ACCEPT);
    await settle();
    expect(w.lines).toHaveLength(1);
    expect(w.lines[0]!.object).toMatchObject({ kind: "Table", rows: [{ cells: ["default", "Active", expect.any(String)] }] });
    expect(w.lines[0]!.object.columnDefinitions.map((column: { name: string }) => column.name)).toEqual(["Name", "Status", "Age"]);
    const route = deprecatedWatchRoutes.find((candidate) => candidate.path === "/api/v1/watch/namespaces/:name")!;
    const one = readWatch(route.handle(apiRequest("/api/v1/watch/namespaces/kube-system", { params: { name: "kube-system" } }), a.api) as Response);
    await settle();
    expect(one.lines.map(line)).toEqual(["ADDED kube-system Active"]);
    a.h.close();
  });
});

test("a namespace whose API pods are stopping is MODIFIED Terminating first, DELETED once they are gone", async () => {
  using dir = tempDir();
  const a = namespacesAgent(dir.path);
  await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } });
  // The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
  await a.send("POST", "/api/v1/namespaces/team-a/pods", { metadata: { name: "web" }, spec: { automountServiceAccountToken: false, terminationGracePeriodSeconds: 3, containers: [{ name: "stubborn", image: "busybox", command: ["sleep", "60"] }] } });
  a.h.runtime.behaviours.set("stubborn", { ignoreSigterm: true });
  await a.sync();
  await a.h.advance(1);
  const w = watch(a, `watch=true&resourceVersion=${a.api.store.revision()}`);
  await a.send("DELETE", "/api/v1/namespaces/team-a");
  await a.sync();
  await settle();
  expect(w.lines.map(line)).toEqual(["MODIFIED team-a Terminating"]);
  await a.h.advance(4);
  await a.sync();
  await settle();
  expect(w.lines.map(line)).toEqual(["MODIFIED team-a Terminating", "DELETED team-a Terminating"]);
  a.h.close();
});
