/**
 * The cluster's cache of what the node's pods reference, against a scripted API server (fake
 * clock): a referenced ConfigMap is listed by name, then followed on its watch; an object no pod
 * references any more stops being watched; an unreachable API server is one line for the whole
 * cache (not per object, not per retry) and one when it answers again, and the objects read
 * before stay; a 403 is one line naming the verb and the object.
 */
import { expect, test } from "bun:test";
import { ClusterApiError, type ClusterApi, type ClusterRequest, type WatchEvent } from "../../src/node/cluster-client.ts";
import { PodObjectCache } from "../../src/node/pod-object-cache.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { FakeClock } from "../fake-clock.ts";

/** Lets the watches' promise chains run (a few turns: a list, then a watch, then its events). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

class ScriptedApi implements ClusterApi {
  mode: "up" | "down" | "forbidden" = "up";
  readonly objects = new Map<string, Record<string, any>>();
  readonly calls: string[] = [];
  private readonly streams = new Set<{ path: string; push: (event: WatchEvent) => void; fail: (error: Error) => void }>();

  async request<T>(request: ClusterRequest): Promise<T> {
    this.calls.push(`${request.method} ${request.path}?${request.query?.fieldSelector ?? ""}`);
    this.check(request.path);
    const name = String(request.query?.fieldSelector ?? "").replace("metadata.name=", "");
    const object = this.objects.get(`${request.path}/${name}`);
    return { metadata: { resourceVersion: "1" }, items: object ? [object] : [] } as T;
  }

  async *watch<T>(path: string, query: Record<string, unknown>, signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    this.calls.push(`WATCH ${path}?${query.fieldSelector ?? ""}`);
    this.check(path);
    const queue: WatchEvent[] = [];
    let wake: (() => void) | undefined;
    let failure: Error | undefined;
    const stream = { path, push: (event: WatchEvent) => (queue.push(event), wake?.()), fail: (error: Error) => ((failure = error), wake?.()) };
    this.streams.add(stream);
    signal.addEventListener("abort", () => wake?.());
    try {
      while (!signal.aborted) {
        if (failure) throw failure;
        const event = queue.shift();
        if (event) yield event as WatchEvent<T>;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      this.streams.delete(stream);
    }
  }

  set(path: string, name: string, data: Record<string, string>): void {
    const object = { metadata: { name, resourceVersion: String(Date.now()) }, data };
    const existed = this.objects.has(`${path}/${name}`);
    this.objects.set(`${path}/${name}`, object);
    for (const stream of this.streams) if (stream.path === path) stream.push({ type: existed ? "MODIFIED" : "ADDED", object });
  }

  openWatches(): number {
    return this.streams.size;
  }

  breakWatches(): void {
    for (const stream of this.streams) stream.fail(new ClusterApiError(0, "ServiceUnavailable", "connection reset", { method: "GET", path: stream.path }));
  }

  private check(path: string): void {
    if (this.mode === "down") throw new ClusterApiError(0, "ServiceUnavailable", `GET ${path}: Unable to connect`, { method: "GET", path });
    if (this.mode === "forbidden") throw new ClusterApiError(403, "Forbidden", `configmaps is forbidden: User "system:node:n1" cannot list resource "configmaps"`, { method: "GET", path });
  }
}

function podUsing(uid: string, configMaps: string[]) {
  return validatePod(
    { apiVersion: "v1", kind: "Pod", metadata: { name: `p-${uid}`, namespace: "demo", uid }, spec: { volumes: configMaps.map((name) => ({ name, configMap: { name } })), containers: [{ name: "app", image: "busybox", command: ["true"] }] } },
    { file: "pod", source: "api", node: "", apiObjects: "allowed" },
  );
}

const CM = "/api/v1/namespaces/demo/configmaps";

function setup() {
  const api = new ScriptedApi();
  const clock = new FakeClock();
  const logs: string[] = [];
  const cache = new PodObjectCache({ client: api, clock, log: (line) => logs.push(line) });
  return { api, clock, logs, cache };
}

test("a referenced ConfigMap is listed by name and followed on its watch; released, its watch ends", async () => {
  const { api, clock, cache } = setup();
  api.set(CM, "a", { k: "1" });
  const pod = podUsing("u1", ["a"]);
  expect(cache.configMap("demo", "a")).toEqual({ state: "unavailable", message: 'object "demo"/"a" not registered' });
  cache.registerPod(pod);
  // Being listed: the loop keeps quiet for the second the kubelet's managers wait, then reports this.
  expect(cache.configMap("demo", "a")).toEqual({ state: "unavailable", message: "failed to sync configmap cache: timed out waiting for the condition", quietUntil: clock.now() + 1000 });
  await settle();
  expect(cache.configMap("demo", "a")).toEqual({ state: "found", object: { data: { k: "1" }, binaryData: {} } });
  expect(api.calls).toEqual([`GET ${CM}?metadata.name=a`, `WATCH ${CM}?metadata.name=a`]);
  api.set(CM, "a", { k: "2" });
  await settle();
  expect(cache.configMap("demo", "a").state === "found" && cache.configMap("demo", "a")).toMatchObject({ object: { data: { k: "2" } } });
  // A second pod referencing it shares the watch; it ends with the last one.
  const other = podUsing("u2", ["a"]);
  cache.registerPod(other);
  cache.unregisterPod(pod.uid);
  await settle();
  expect(api.openWatches()).toBe(1);
  cache.unregisterPod(other.uid);
  await settle();
  expect(api.openWatches()).toBe(0);
  cache.stop();
});

test("an unreachable API server is one line for every watch, one when it answers again; what was read stays", async () => {
  const { api, clock, logs, cache } = setup();
  api.set(CM, "a", { k: "1" });
  cache.registerPod(podUsing("u1", ["a", "b", "c"]));
  await settle();
  api.mode = "down";
  api.breakWatches();
  await settle();
  for (let i = 0; i < 5; i++) {
    clock.stepSeconds(30);
    await settle();
  }
  expect(logs).toEqual([`node objects: the API server cannot be reached (connection reset); what was read is kept, and read again once it answers`]);
  expect(cache.configMap("demo", "a")).toMatchObject({ state: "found", object: { data: { k: "1" } } });
  api.mode = "up";
  clock.stepSeconds(30);
  await settle();
  expect(logs.slice(1)).toEqual(["node objects: the API server answers again"]);
  expect(cache.configMap("demo", "b")).toEqual({ state: "notFound" });
  cache.stop();
});

test("a 403 is one line naming the verb and the object, and the lookup says why", async () => {
  const { api, clock, logs, cache } = setup();
  api.mode = "forbidden";
  cache.registerPod(podUsing("u1", ["x"]));
  await settle();
  clock.stepSeconds(5);
  await settle();
  expect(logs).toEqual([`node objects: forbidden to list configmaps demo/x: configmaps is forbidden: User "system:node:n1" cannot list resource "configmaps"`]);
  expect(cache.configMap("demo", "x")).toEqual({ state: "unavailable", message: `configmaps is forbidden: User "system:node:n1" cannot list resource "configmaps"` });
  cache.stop();
});
