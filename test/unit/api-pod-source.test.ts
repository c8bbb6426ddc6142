import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiPodSource } from "../../src/config/api-pod-source.ts";
import { loadManifests } from "../../src/manifest/source.ts";
import type { PodKey, PodSpec } from "../../src/manifest/types.ts";
import { SqliteApiPodStore } from "../../src/store/api-pod-store.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

function podJson(name: string, extra: { grace?: number; labels?: Record<string, string> } = {}) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", ...(extra.labels && { labels: extra.labels }) },
    spec: { terminationGracePeriodSeconds: extra.grace ?? 30, containers: [{ name: "app", image: "busybox", command: ["sleep", "3600"] }] },
  };
}

/** The agent's two sources on the fake runtime: the store's API pods and a manifest directory, `run`'s way. */
function agent(dir: string, node = "lab") {
  const h = storeHarness(dir);
  const store = new SqliteApiPodStore(h.agent.db, h.store.revisions);
  const logs: string[] = [];
  const source = new ApiPodSource({ store, node, log: (line) => logs.push(line) });
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  let refused: string[] = [];
  const desired = (): Map<PodKey, PodSpec> => {
    const files = loadManifests(manifests, node, {}, source.taken());
    refused = files.errors.map((error) => error.message);
    return new Map([...files.pods, ...source.pods()]);
  };
  const sync = async () => {
    source.read();
    await h.kubelet.sync(desired());
    if (source.removeFinished((key, uid) => h.kubelet.pods.get(key)?.spec.uid === uid)) await h.kubelet.sync(desired());
  };
  return { ...h, store, source, manifests, sync, logs, refused: () => refused };
}

describe("the API's pods as a second source", () => {
  test("a read admits only the rows written since the last one: the rescan of unchanged pods validates nothing again", async () => {
    using dir = tempDir();
    const a = agent(dir.path);
    a.store.create({ uid: "11111111-2222-4333-8444-555555555555", namespace: "default", name: "web", createdAt: 42_000, object: podJson("web") });
    a.store.create({ uid: "21111111-2222-4333-8444-555555555555", namespace: "default", name: "db", createdAt: 42_000, object: podJson("db") });
    a.source.read();
    const [web, db] = [a.source.pods().get("default/web"), a.source.pods().get("default/db")];
    a.source.read();
    expect(a.source.pods().get("default/web")).toBe(web!);
    a.store.update("default", "web", undefined, podJson("web", { labels: { tier: "front" } }));
    a.store.markDeleting("default", "db", { requestedAt: 50_000, gracePeriodSeconds: 5 });
    a.source.read();
    expect(a.source.pods().get("default/web")).not.toBe(web!);
    expect(a.source.pods().get("default/web")!.labels).toEqual({ tier: "front" });
    expect(a.source.pods().get("default/db")!.api?.deletion?.gracePeriodSeconds).toBe(5);
    expect(a.source.pods().get("default/db")).not.toBe(db!);
    a.agent.close();
  });

  test("an API pod runs under its own name and uid, with config.source api, beside the files' NAME-NODE pods", async () => {
    using dir = tempDir();
    const a = agent(dir.path);
    writeFileSync(join(a.manifests, "file.json"), JSON.stringify(podJson("file")));
    a.store.create({ uid: "11111111-2222-4333-8444-555555555555", namespace: "default", name: "web", createdAt: 42_000, object: podJson("web") });
    await a.sync();
    expect([...a.kubelet.pods.keys()].sort()).toEqual(["default/file-lab", "default/web"]);
    const web = a.kubelet.pods.get("default/web")!;
    expect(web.app[0]!.state).toBe("running");
    const object = servedPod(web, { runtimeName: "fake" });
    expect(object.metadata.uid).toBe("11111111-2222-4333-8444-555555555555");
    expect(object.metadata.creationTimestamp).toBe("1970-01-01T00:00:42Z");
    expect(object.metadata.annotations!["kubernetes.io/config.source"]).toBe("api");
    expect(object.spec.nodeName).toBe("lab");
    a.agent.close();
  });

  test("new labels on an API pod are taken without replacing it", async () => {
    using dir = tempDir();
    const a = agent(dir.path);
    const created = a.store.create({ uid: "u-web", namespace: "default", name: "web", createdAt: 1, object: podJson("web") });
    await a.sync();
    const containerId = a.kubelet.pods.get("default/web")!.app[0]!.containerId;
    a.store.update("default", "web", undefined, podJson("web", { labels: { tier: "front" } }));
    await a.sync();
    const web = a.kubelet.pods.get("default/web")!;
    expect(web.spec.labels).toEqual({ tier: "front" });
    expect(web.deletionRequestedAt).toBeUndefined();
    expect(web.app[0]!.containerId).toBe(containerId);
    expect(created.uid).toBe(web.spec.uid);
    a.agent.close();
  });

  test("a file defining a pod the API holds is refused, naming the API pod; the file's pod runs once the API pod is gone", async () => {
    using dir = tempDir();
    const a = agent(dir.path, "");
    a.store.create({ uid: "u-web", namespace: "default", name: "web", createdAt: 1, object: podJson("web") });
    writeFileSync(join(a.manifests, "web.json"), JSON.stringify(podJson("web", { grace: 3 })));
    await a.sync();
    expect(a.refused()).toEqual(["web.json: pod default/web already exists, created through the API (uid u-web); ignoring this file"]);
    expect(a.kubelet.pods.get("default/web")!.spec.uid).toBe("u-web");
    a.store.markDeleting("default", "web", { requestedAt: a.clock.now(), gracePeriodSeconds: 1 });
    await a.sync();
    await a.advance(3);
    await a.sync();
    expect(a.store.get("default", "web")).toBeUndefined();
    expect(a.refused()).toEqual([]);
    expect(a.kubelet.pods.get("default/web")!.spec.source).toBe(join(a.manifests, "web.json"));
    a.agent.close();
  });

  test("a delete stops the pod with the API's grace (TERM, then KILL and 137), never starts it again, and its row goes", async () => {
    using dir = tempDir();
    const a = agent(dir.path);
    a.runtime.behaviours.set("app", { ignoreSigterm: true });
    a.store.create({ uid: "u-web", namespace: "default", name: "web", createdAt: 1, object: podJson("web", { grace: 30 }) });
    await a.sync();
    a.store.markDeleting("default", "web", { requestedAt: a.clock.now(), gracePeriodSeconds: 2 });
    await a.sync();
    const web = a.kubelet.pods.get("default/web")!;
    expect(servedPod(web, { runtimeName: "fake" }).metadata.deletionGracePeriodSeconds).toBe(2);
    await a.advance(1.9);
    expect(a.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill app SIGTERM"]);
    await a.advance(0.2);
    expect(a.lines((e) => e.reason === "GraceExpired" || e.reason === "Exited")).toEqual(["2.0s GraceExpired app", "2.0s Exited app exited with code 137 (Error): killed with SIGKILL when its grace period ran out"]);
    expect(a.kubelet.pods.has("default/web")).toBe(false);
    await a.sync();
    expect(a.store.get("default", "web")).toBeUndefined();
    expect(a.kubelet.pods.size).toBe(0);
    expect(a.runtime.calls.filter((c) => c.startsWith("start")).length).toBe(1);
    a.agent.close();
  });

  test("a pod deleted while a changed container restarts in place stops for good: the new definition never starts", async () => {
    using dir = tempDir();
    const a = agent(dir.path);
    a.runtime.behaviours.set("app", { ignoreSigterm: true });
    a.store.create({ uid: "u-web", namespace: "default", name: "web", createdAt: 1, object: podJson("web", { grace: 5 }) });
    await a.sync();
    const changed = podJson("web", { grace: 5 });
    changed.spec.containers[0]!.image = "busybox:2";
    a.store.update("default", "web", undefined, changed);
    await a.sync();
    expect(a.lines((e) => e.reason === "Killing")).toEqual(["0.0s Killing app"]);
    a.store.markDeleting("default", "web", { requestedAt: a.clock.now(), gracePeriodSeconds: 5 });
    await a.sync();
    await a.advance(6);
    await a.sync();
    expect(a.kubelet.pods.has("default/web")).toBe(false);
    expect(a.store.get("default", "web")).toBeUndefined();
    expect(a.runtime.calls.filter((c) => c.startsWith("start")).length).toBe(1);
    a.agent.close();
  });

  test("a second delete with a shorter grace brings the SIGKILL forward", async () => {
    using dir = tempDir();
    const a = agent(dir.path);
    a.runtime.behaviours.set("app", { ignoreSigterm: true });
    a.store.create({ uid: "u-web", namespace: "default", name: "web", createdAt: 1, object: podJson("web") });
    await a.sync();
    a.store.markDeleting("default", "web", { requestedAt: a.clock.now(), gracePeriodSeconds: 30 });
    await a.sync();
    await a.advance(1);
    a.store.markDeleting("default", "web", { requestedAt: a.clock.now(), gracePeriodSeconds: 0 });
    await a.sync();
    await a.advance(2.1);
    expect(a.runtime.calls.filter((c) => c.startsWith("kill"))).toEqual(["kill app SIGTERM", "kill app SIGKILL"]);
    expect(a.kubelet.pods.has("default/web")).toBe(false);
    a.agent.close();
  });
});
