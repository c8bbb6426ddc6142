/**
 * Node mode's pods wired to a loop (agent/node-pods.ts), with a stand-in loop and a fake API server:
 * which writes each situation leads to (a pass's status, a finished deletion, a refusal, a mirror).
 */
import { describe, expect, test } from "bun:test";
import { startNodePods } from "../../src/agent/node-pods.ts";
import type { ClusterPodObject } from "../../src/config/cluster-pod-source.ts";
import type { PodListener } from "../../src/kubelet/status/status-manager.ts";
import type { PodRecord } from "../../src/kubelet/pod-state.ts";
import type { ClusterApi, ClusterRequest, WatchEvent } from "../../src/node/cluster-client.ts";
import { ApiReachability } from "../../src/node/api-reachability.ts";
import { ClusterEvents } from "../../src/node/cluster-events.ts";
import { EventRecorder } from "../../src/v1/kube-event.ts";
import type { V1Pod } from "../../src/v1/v1.ts";
import type { PodKey, PodSpec } from "../../src/manifest/types.ts";
import { FakeClock } from "../fake-clock.ts";
import { WatchFeed } from "../fake-watch-feed.ts";

/** Lists answer `items`; the watch stays open and quiet; writes are recorded and answered plainly. */
class FakeApi implements Pick<ClusterApi, "request" | "watch"> {
  items: ClusterPodObject[] = [];
  readonly writes: ClusterRequest[] = [];
  /** Each pod's status as the node's patches left it. */
  readonly statuses = new Map<string, Record<string, unknown>>();
  private made = 0;

  async request<T>(request: ClusterRequest): Promise<T> {
    if (request.method === "GET" && request.path === "/api/v1/pods") return { metadata: { resourceVersion: "5" }, items: this.items } as T;
    if (request.method === "GET") return { metadata: { uid: "node-uid" } } as T;
    this.writes.push(request);
    if (request.method === "POST" && request.path.endsWith("/pods")) return { metadata: { uid: `mirror-${++this.made}` } } as T;
    if (request.method === "PATCH") {
      // Top-level fields are enough for these statuses: a null removes one.
      const name = request.path.split("/")[6]!;
      const status = { ...(this.statuses.get(name) ?? this.items.find((item) => item.metadata.name === name)?.status) };
      for (const [field, value] of Object.entries((request.body as { status: Record<string, unknown> }).status)) {
        if (field.startsWith("$")) continue;
        if (value === null) delete status[field];
        else status[field] = value;
      }
      this.statuses.set(name, status);
      return { metadata: { resourceVersion: "9" }, status } as T;
    }
    return {} as T;
  }

  private readonly feed = new WatchFeed<ClusterPodObject>();

  /** One watch at a time, fed by `send`. */
  async *watch<T>(_path: string, _query: unknown, signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    yield* this.feed.stream<T>(signal);
  }

  send(event: WatchEvent<ClusterPodObject>): void {
    this.feed.send(event);
  }

  sent(): string[] {
    return this.writes.map((request) => `${request.method} ${request.path}`);
  }
}

class FakeLoop {
  readonly pods = new Map<PodKey, PodRecord>();
  readonly recorder = new EventRecorder();
  private readonly listeners = new Set<PodListener>();

  onPodSynced(listener: PodListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  synced(spec: PodSpec, status: Record<string, unknown>, removed = false): void {
    const record = { spec } as PodRecord;
    if (removed) this.pods.delete(spec.key);
    else this.pods.set(spec.key, record);
    const object = { metadata: { name: spec.fullName, namespace: spec.namespace, annotations: {} }, spec: {}, status } as unknown as V1Pod;
    for (const listener of this.listeners) listener(record, object, removed);
  }
}

const clusterPod = (name: string, uid: string, extra: Partial<ClusterPodObject["metadata"]> = {}, command: string[] | null = ["sleep", "60"]): ClusterPodObject => ({
  metadata: { name, namespace: "default", uid, resourceVersion: "3", creationTimestamp: "2026-01-01T12:00:00Z", ...extra },
  spec: { nodeName: "n1", containers: [{ name: "c", image: "busybox", ...(command && { command }) }] },
  status: { phase: "Pending", qosClass: "BestEffort" },
});

const settle = async () => {
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
};

function setup(items: ClusterPodObject[], loopOpen = true) {
  const api = new FakeApi();
  api.items = items;
  const loop = new FakeLoop();
  const clock = new FakeClock();
  let rescans = 0;
  const reachability = new ApiReachability({ clock, log: () => {} });
  const events = new ClusterEvents({ client: api, nodeName: "n1", clock, log: () => {}, reachability });
  const pods = startNodePods({ client: api, nodeName: "n1", kubelet: loop, rules: { runtime: "process" }, rescan: () => rescans++, loopOpen: () => loopOpen, clock, log: () => {}, reachability, events });
  return { api, loop, pods, clock, rescans: () => rescans, open: () => (loopOpen = true) };
}

describe("node mode's pods", () => {
  test("a pass's status goes to pods/status with the uid; once the deleted pod is removed, the final delete follows", async () => {
    const { api, loop, pods } = setup([clusterPod("web", "u1")]);
    await settle();
    const spec = pods.source.pods().get("default/web")!;
    loop.synced(spec, { phase: "Running" });
    await settle();
    expect(api.sent()).toEqual(["PATCH /api/v1/namespaces/default/pods/web/status"]);
    expect((api.writes[0]!.body as { metadata: unknown }).metadata).toEqual({ uid: "u1" });
    // The API server marks it deleted; the loop stops it and says it is gone.
    const marked = clusterPod("web", "u1", { resourceVersion: "10", deletionTimestamp: "2026-01-01T12:00:30Z", deletionGracePeriodSeconds: 30 });
    marked.status = api.statuses.get("web");
    api.send({ type: "MODIFIED", object: marked });
    await settle();
    loop.synced(pods.source.pods().get("default/web")!, { phase: "Failed" }, true);
    await settle();
    expect(api.sent().slice(1)).toEqual(["PATCH /api/v1/namespaces/default/pods/web/status", "DELETE /api/v1/namespaces/default/pods/web"]);
    expect(api.writes[2]!.body).toEqual({ apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions: { uid: "u1" } });
    await pods.stop();
  });

  test("a pod deleted before it ever ran here is reported Failed and deleted at once, but only once adoption is done", async () => {
    const deleted = clusterPod("gone", "u2", { deletionTimestamp: "2026-01-01T12:00:30Z", deletionGracePeriodSeconds: 30 });
    const { api, pods, clock, open } = setup([deleted], false);
    await settle();
    expect(api.sent()).toEqual([]);
    // Adoption finishes with no change from the cluster: the pod is looked at again all the same.
    open();
    clock.step(500);
    await settle();
    expect(api.sent()).toEqual(["PATCH /api/v1/namespaces/default/pods/gone/status", "DELETE /api/v1/namespaces/default/pods/gone"]);
    expect((api.writes[0]!.body as { status: { phase: string } }).status.phase).toBe("Failed");
    await pods.stop();
  });

  test("a pod the runtime cannot run: a Failed status and a Warning event, as rejectPod words them", async () => {
    const { api, pods, rescans } = setup([clusterPod("nocmd", "u3", {}, null)]);
    await settle();
    expect(rescans()).toBe(1);
    const patch = api.writes.find((request) => request.method === "PATCH")!;
    expect(patch.path).toBe("/api/v1/namespaces/default/pods/nocmd/status");
    const status = (patch.body as { status: Record<string, string> }).status;
    expect([status.phase, status.reason]).toEqual(["Failed", "UnsupportedPodSpec"]);
    expect(status.message).toStartWith("Pod was rejected: spec.containers[0]");
    const event = api.writes.find((request) => request.path.endsWith("/events"))!.body as Record<string, string>;
    expect([event.type, event.reason]).toEqual(["Warning", "UnsupportedPodSpec"]);
    await pods.stop();
  });

  test("the kubelet's own admission answers before the runtime's rules: an unsafe sysctl is SysctlForbidden, command or not", async () => {
    const unsafe = clusterPod("sysctl", "u4", {}, null);
    unsafe.spec = { ...unsafe.spec, securityContext: { sysctls: [{ name: "kernel.msgmax", value: "10000000000" }] } };
    const { api, pods } = setup([unsafe]);
    await settle();
    const status = (api.writes.find((request) => request.method === "PATCH")!.body as { status: Record<string, string> }).status;
    expect([status.phase, status.reason, status.message]).toEqual(["Failed", "SysctlForbidden", 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted']);
    const event = api.writes.find((request) => request.path.endsWith("/events"))!.body as Record<string, string>;
    expect([event.type, event.reason, event.message]).toEqual(["Warning", "SysctlForbidden", 'forbidden sysctl: "kernel.msgmax" not allowlisted']);
    await pods.stop();
  });

  test("a static pod's pass makes its mirror pod, whose status is then the static pod's", async () => {
    const { api, loop, pods } = setup([]);
    await settle();
    const spec = { key: "default/stat-n1", namespace: "default", name: "stat", fullName: "stat-n1", uid: "static-uid", configHash: "h1" } as PodSpec;
    loop.synced(spec, { phase: "Running" });
    await settle();
    expect(api.sent()).toEqual(["POST /api/v1/namespaces/default/pods", "PATCH /api/v1/namespaces/default/pods/stat-n1/status"]);
    expect((api.writes[1]!.body as { metadata: unknown }).metadata).toEqual({ uid: "mirror-1" });
    await pods.stop();
  });
});
