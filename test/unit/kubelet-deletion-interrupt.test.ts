import { describe, expect, test } from "bun:test";
import { getPod } from "../../src/api/resources/pods/pods-api.ts";
import { createPod } from "../../src/api/resources/pods/pods-create.ts";
import { deletePod } from "../../src/api/resources/pods/pods-delete.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { watchOrList } from "../../src/api/watch/watch.ts";
import { podKind } from "../../src/api/resources/watch-kinds.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import type { PodKey, PodSpec } from "../../src/manifest/types.ts";
import type { ContainerConfig } from "../../src/runtime/runtime.ts";
import { apiHarness, apiRequest, jsonRequest, readWatch, settle } from "../api-watch-fixtures.ts";
import type { FakeRuntime } from "../fake-runtime.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";

const CONTAINERS = 500;

/**
 * Each start takes a turn of the event loop, as a spawn does, and `at` runs once `at.after` of
 * them have started: what happens then lands between two starts of one pass.
 */
function slowStarts(runtime: FakeRuntime, at: { after: number; run: () => void }) {
  const counted = { starts: 0, images: [] as string[] };
  const start = runtime.startContainer.bind(runtime);
  runtime.startContainer = async (config: ContainerConfig) => {
    const id = await start(config);
    counted.starts++;
    counted.images.push(config.container.image);
    if (counted.starts === at.after) at.run();
    await new Promise<void>((resolve) => setImmediate(resolve));
    return id;
  };
  return counted;
}

/** The agent's wiring of the API's pods into the loop: a committed write offers the sources again, as `run` does. */
function apiAgent(dir: string) {
  const h = apiHarness(dir);
  const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
  const api = { ...h.api, podWrites: sources.writes };
  sources.attach(h.kubelet, () => {
    void h.kubelet.sync(sources.desired(new Map()));
    sources.removeFinished();
  });
  const path = "/api/v1/namespaces/default/pods";
  return {
    h,
    api,
    create: (body: unknown) => createPod(jsonRequest("POST", path, { namespace: "default" }, body), api),
    remove: (name: string) => deletePod(jsonRequest("DELETE", `${path}/${name}`, { namespace: "default", name }), api),
    /** The pod a GET serves, or the status code it refuses with. */
    get: async (name: string): Promise<Record<string, any> | number> => {
      try {
        return (await getPod(jsonRequest("GET", `${path}/${name}`, { namespace: "default", name }), api).json()) as Record<string, any>;
      } catch (error) {
        if (error instanceof ApiError) return error.code;
        throw error;
      }
    },
    watch: (name: string, resourceVersion: string) =>
      readWatch(watchOrList(apiRequest(`${path}?watch=true&fieldSelector=metadata.name%3D${name}&resourceVersion=${resourceVersion}`, { params: { namespace: "default" } }), api, podKind, () => {
        throw new Error("a list, not a watch");
      }) as Response),
  };
}

function bigPod(name: string, grace: number) {
  const containers = Array.from({ length: CONTAINERS }, (_, i) => ({ name: `c${i}`, image: "busybox", command: ["sleep", "3600"] }));
  // The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { automountServiceAccountToken: false, terminationGracePeriodSeconds: grace, containers } };
}

function running(runtime: FakeRuntime): number {
  return [...runtime.containers.values()].filter((c) => c.state === "running").length;
}

describe("a deletion interrupts the pod's sync", () => {
  test(`a DELETE while the first pass starts ${CONTAINERS} containers: at most one more starts; GET serves it Terminating until every container is gone, then 404; a watch sees it deleting, then DELETED`, async () => {
    using dir = tempDir();
    const a = apiAgent(dir.path);
    // Each container takes its whole grace to stop: the pod stays Terminating meanwhile.
    for (let i = 0; i < CONTAINERS; i++) a.h.runtime.behaviours.set(`c${i}`, { ignoreSigterm: true });
    let answered: { starts: number; response: Response } | undefined;
    const counted = slowStarts(a.h.runtime, {
      after: 100,
      run: () => void a.remove("big").then((response) => (answered = { starts: counted.starts, response })),
    });
    expect((await a.create(bigPod("big", 5))).status).toBe(201);
    await settle();
    await a.h.kubelet.idle();

    expect(answered!.response.status).toBe(200);
    expect(counted.starts - answered!.starts).toBeLessThanOrEqual(1);
    expect(counted.starts).toBeLessThan(CONTAINERS);
    const deleted = (await answered!.response.json()) as Record<string, any>;
    const watch = a.watch("big", deleted.metadata.resourceVersion);
    await settle();

    // Killing, within the grace: still there, Terminating.
    await a.h.advance(1);
    expect(running(a.h.runtime)).toBe(counted.starts);
    const terminating = await a.get("big");
    expect(terminating).toMatchObject({ metadata: { deletionTimestamp: deleted.metadata.deletionTimestamp, deletionGracePeriodSeconds: 5 } });

    await a.h.advance(5);
    await settle();
    expect(running(a.h.runtime)).toBe(0);
    expect(await a.get("big")).toBe(404);
    expect(counted.starts).toBe(a.h.runtime.calls.filter((call) => call.startsWith("start ")).length);
    await settle();
    const types = watch.lines.map((line) => `${line.type}${line.object.metadata.deletionTimestamp ? " deleting" : ""}`);
    // Every line carries the deletion, and DELETED comes last, once the containers are gone. The
    // first line is ADDED, not the API server's MODIFIED: the pods row the loop inserts after the
    // delete has a created revision past the watch's (api_pods keeps no creation revision yet).
    expect(types.at(-1)).toBe("DELETED deleting");
    expect(types.every((type) => type.endsWith(" deleting"))).toBe(true);
    void watch.cancel();
    a.h.close();
  });

  test("a manifest removed while its pod's pass starts its containers: starting stops at the next container", async () => {
    const h = harness();
    const many = pod({ name: "many", grace: 1, containers: Array.from({ length: CONTAINERS }, (_, i) => container(`c${i}`, { command: ["sleep", "3600"] })) });
    let startsAtRemoval = 0;
    const counted = slowStarts(h.runtime, {
      after: 100,
      run: () => {
        startsAtRemoval = counted.starts;
        void h.kubelet.sync(new Map<PodKey, PodSpec>());
      },
    });
    await h.kubelet.sync(desired(many));
    expect(counted.starts - startsAtRemoval).toBeLessThanOrEqual(1);
    await h.advance(3);
    expect(h.kubelet.pods.size).toBe(0);
    expect(running(h.runtime)).toBe(0);
    expect(h.lines((e) => e.reason === "PodRemoved")).toHaveLength(1);
  });

  test("a manifest changed while its pod's pass starts its containers: the old spec stops starting, and the new one starts once it is gone", async () => {
    const h = harness();
    const containers = (image: string) => Array.from({ length: CONTAINERS }, (_, i) => container(`c${i}`, { image, command: ["sleep", "3600"] }));
    const first = pod({ name: "many", grace: 1, containers: containers("busybox:1") });
    const second = pod({ name: "many", grace: 1, revision: 2, containers: containers("busybox:2") });
    let startsAtChange = 0;
    const counted = slowStarts(h.runtime, {
      after: 100,
      run: () => {
        startsAtChange = counted.starts;
        void h.kubelet.sync(desired(second));
      },
    });
    await h.kubelet.sync(desired(first));
    const oldStarts = counted.images.filter((image) => image === "busybox:1").length;
    expect(oldStarts - startsAtChange).toBeLessThanOrEqual(1);
    await h.advance(3);
    expect(h.kubelet.pods.get(second.key)?.spec.uid).toBe(second.uid);
    expect([...h.runtime.containers.values()].filter((c) => c.state === "running").every((c) => c.config.container.image === "busybox:2")).toBe(true);
    expect(running(h.runtime)).toBe(CONTAINERS);
  });

  test("an agent shutting down while a pass starts containers stops starting them", async () => {
    const h = harness();
    const many = pod({ name: "many", grace: 1, containers: Array.from({ length: CONTAINERS }, (_, i) => container(`c${i}`, { command: ["sleep", "3600"] })) });
    let startsAtShutdown = 0;
    let shutdown: Promise<void> | undefined;
    const counted = slowStarts(h.runtime, {
      after: 100,
      run: () => {
        startsAtShutdown = counted.starts;
        shutdown = h.kubelet.shutdown();
      },
    });
    await h.kubelet.sync(desired(many));
    expect(counted.starts - startsAtShutdown).toBeLessThanOrEqual(1);
    await h.advance(3);
    await shutdown;
    expect(running(h.runtime)).toBe(0);
  });
});
