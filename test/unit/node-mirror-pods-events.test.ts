/**
 * Mirror pods and the node's events against a fake API server: what is created, replaced and
 * deleted (with which preconditions), and how repeated events aggregate into one Event's count.
 */
import { describe, expect, test } from "bun:test";
import { ClusterApiError, type ClusterApi, type ClusterRequest } from "../../src/node/cluster-client.ts";
import { ClusterEvents } from "../../src/node/cluster-events.ts";
import { MirrorPods, type StaticPod } from "../../src/node/mirror-pods.ts";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import type { V1Pod } from "../../src/v1/v1.ts";
import { FakeClock } from "../fake-clock.ts";

/** Records requests; pods POSTed get uids m1, m2...; a Node n1 with uid node-uid; events stored by name. */
class FakeApi implements Pick<ClusterApi, "request"> {
  readonly requests: ClusterRequest[] = [];
  readonly events = new Map<string, Record<string, any>>();
  private made = 0;
  down = false;

  async request<T>(request: ClusterRequest): Promise<T> {
    this.requests.push(request);
    if (this.down) throw new ClusterApiError(0, "ServiceUnavailable", "connection refused", request);
    if (request.path === "/api/v1/nodes/n1") return { metadata: { uid: "node-uid" } } as T;
    if (request.path.startsWith("/api/v1/namespaces/gone/")) throw new ClusterApiError(404, "NotFound", 'namespaces "gone" not found', request);
    if (request.path.endsWith("/pods") && request.method === "POST") return { metadata: { uid: `m${++this.made}` } } as T;
    if (request.path.endsWith("/events") && request.method === "POST") {
      const body = request.body as Record<string, any>;
      this.events.set(body.metadata.name, body);
      return body as T;
    }
    if (request.path.includes("/events/") && request.method === "PATCH") {
      const event = this.events.get(request.path.split("/").at(-1)!)!;
      Object.assign(event, request.body);
      return event as T;
    }
    return {} as T;
  }

  sent(): string[] {
    return this.requests.map((request) => `${request.method} ${request.path}`);
  }
}

const staticPod = (hash: string): StaticPod => ({
  configHash: hash,
  object: { apiVersion: "v1", kind: "Pod", metadata: { name: "stat-n1", namespace: "default", uid: "static-uid", annotations: { "kubernetes.io/config.source": "file" } }, spec: { containers: [] }, status: { phase: "Running" } } as unknown as V1Pod,
});

describe("MirrorPods", () => {
  const setup = () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const created: string[] = [];
    const mirrors = new MirrorPods({ client: api, nodeName: "n1", clock, log: () => {}, onCreated: (_key, uid) => created.push(uid) });
    return { api, clock, mirrors, created };
  };

  test("a missing mirror is created with the mirror annotation and the Node as controller owner", async () => {
    const { api, mirrors, created } = setup();
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h1")]]));
    await mirrors.idle();
    expect(api.sent()).toEqual(["GET /api/v1/nodes/n1", "POST /api/v1/namespaces/default/pods"]);
    const body = api.requests[1]!.body as V1Pod;
    expect(body.metadata.annotations).toMatchObject({ "kubernetes.io/config.mirror": "h1", "kubernetes.io/config.hash": "h1", "kubernetes.io/config.source": "file" });
    expect((body.metadata as unknown as Record<string, unknown>).ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: "n1", uid: "node-uid", controller: true }]);
    expect(body.metadata.uid).toBeUndefined();
    expect(body.spec.nodeName).toBe("n1");
    expect(created).toEqual(["m1"]);
    // Known now: another reconcile makes nothing.
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h1")]]));
    await mirrors.idle();
    expect(api.requests.length).toBe(2);
  });

  test("deleted through the API (the watch shows it gone): made again", async () => {
    const { api, mirrors } = setup();
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h1")]]));
    await mirrors.idle();
    mirrors.observe("default/stat-n1", undefined, "m1");
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h1")]]));
    await mirrors.idle();
    expect(api.sent().filter((line) => line.startsWith("POST")).length).toBe(2);
  });

  test("a changed static pod (new hash) or a mirror being deleted: deleted with its uid at grace 0, then made again", async () => {
    const { api, mirrors } = setup();
    mirrors.observe("default/stat-n1", { uid: "old", hash: "h1", deleting: false }, "old");
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h2")]]));
    await mirrors.idle();
    expect(api.sent()).toEqual(["DELETE /api/v1/namespaces/default/pods/stat-n1", "GET /api/v1/nodes/n1", "POST /api/v1/namespaces/default/pods"]);
    expect(api.requests[0]!.body).toEqual({ apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions: { uid: "old" } });
    mirrors.observe("default/stat-n1", { uid: "m1", hash: "h2", deleting: true }, "m1");
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h2")]]));
    await mirrors.idle();
    expect(api.sent().slice(3)).toEqual(["DELETE /api/v1/namespaces/default/pods/stat-n1", "POST /api/v1/namespaces/default/pods"]);
  });

  test("its static pod gone (the file removed): deleted with its uid, not made again", async () => {
    const { api, mirrors } = setup();
    mirrors.observe("default/stat-n1", { uid: "m7", hash: "h1", deleting: false }, "m7");
    mirrors.reconcile(new Map());
    await mirrors.idle();
    expect(api.sent()).toEqual(["DELETE /api/v1/namespaces/default/pods/stat-n1"]);
    expect((api.requests[0]!.body as Record<string, any>).preconditions).toEqual({ uid: "m7" });
  });

  test("a mirror the API server refuses (its namespace is gone) holds back no other, and is tried again later", async () => {
    const { api, clock, mirrors, created } = setup();
    const gone = staticPod("h1");
    mirrors.reconcile(new Map([["gone/stat-n1", gone], ["default/stat-n1", staticPod("h1")]]));
    // Not idle: a retry is armed.
    for (let turn = 0; turn < 5; turn++) await Bun.sleep(0);
    expect(created).toEqual(["m1"]);
    expect(clock.nextDueAt()! - clock.now()).toBe(1000);
    clock.step(1000);
    for (let turn = 0; turn < 5; turn++) await Bun.sleep(0);
    expect(api.sent().filter((line) => line === "POST /api/v1/namespaces/gone/pods").length).toBe(2);
    mirrors.stop();
  });

  test("an unreachable API server: the pass is retried on the clock until it goes through", async () => {
    const { api, clock, mirrors, created } = setup();
    api.down = true;
    mirrors.reconcile(new Map([["default/stat-n1", staticPod("h1")]]));
    await Bun.sleep(0);
    expect(clock.nextDueAt()! - clock.now()).toBe(1000);
    api.down = false;
    clock.step(1000);
    await mirrors.idle();
    expect(created).toEqual(["m1"]);
  });
});

describe("ClusterEvents", () => {
  const event = (reason: string, message: string, container = "web"): KubeEvent => ({ at: Date.UTC(2026, 0, 1, 12), type: reason === "BackOff" ? "Warning" : "Normal", reason, podKey: "default/web", namespace: "default", pod: "web", podUid: "u1", container, message });
  const web = { namespace: "default", name: "web", uid: "u1" };

  test("an event is a core/v1 Event about the pod, from the kubelet on this node", async () => {
    const api = new FakeApi();
    const events = new ClusterEvents({ client: api, nodeName: "n1", clock: new FakeClock(), log: () => {} });
    events.record(event("Started", "Started container web"), web);
    await events.idle();
    const [posted] = [...api.events.values()];
    expect(posted).toMatchObject({
      involvedObject: { apiVersion: "v1", kind: "Pod", namespace: "default", name: "web", uid: "u1", fieldPath: "spec.containers{web}" },
      reason: "Started",
      message: "Started container web",
      type: "Normal",
      source: { component: "kubelet", host: "n1" },
      count: 1,
      reportingComponent: "kubelet",
      reportingInstance: "n1",
    });
    expect(posted!.metadata.name).toStartWith("web.");
  });

  test("an event about the Node goes to the default namespace, about the cluster-scoped Node", async () => {
    const api = new FakeApi();
    const events = new ClusterEvents({ client: api, nodeName: "n1", clock: new FakeClock(), log: () => {} });
    const nodeEvent: KubeEvent = { at: Date.UTC(2026, 0, 1, 12), type: "Normal", reason: "NodeReady", podKey: "", namespace: "", pod: "n1", podUid: "node-uid", container: "", message: "Node n1 status is now: NodeReady" };
    events.record(nodeEvent, { kind: "Node", namespace: "", name: "n1", uid: "node-uid" });
    await events.idle();
    const [posted] = [...api.events.values()];
    expect(posted!.involvedObject).toEqual({ apiVersion: "v1", kind: "Node", name: "n1", uid: "node-uid" });
    expect(posted!.metadata).toMatchObject({ namespace: "default", name: expect.stringMatching(/^n1\./) });
    expect(posted).toMatchObject({ reason: "NodeReady", message: "Node n1 status is now: NodeReady", source: { component: "kubelet", host: "n1" } });
  });

  test("the same event again is one Event whose count grows (a PATCH), a different one is another Event", async () => {
    const api = new FakeApi();
    const events = new ClusterEvents({ client: api, nodeName: "n1", clock: new FakeClock(), log: () => {} });
    const backOff = event("BackOff", "Back-off restarting failed container web in pod web");
    events.record(backOff, web);
    await events.idle();
    for (let repeat = 0; repeat < 4; repeat++) events.record(backOff, web);
    events.record(event("Started", "Started container web"), web);
    await events.idle();
    expect(api.events.size).toBe(2);
    const stored = [...api.events.values()].find((e) => e.reason === "BackOff")!;
    expect(stored.count).toBe(5);
    // The first repeat went at once; the three queued behind it went as one patch with the newest count.
    expect(api.requests.filter((request) => request.method === "PATCH").length).toBe(2);
  });

  test("bounded: past maxQueued the oldest events go, with one log line", async () => {
    const api = new FakeApi();
    api.down = true;
    const lines: string[] = [];
    const events = new ClusterEvents({ client: api, nodeName: "n1", clock: new FakeClock(), log: (line) => lines.push(line), maxQueued: 3 });
    for (let i = 0; i < 10; i++) events.record(event("Created", `Created container c${i}`, `c${i}`), web);
    expect(lines.filter((line) => line.includes("queue")).length).toBe(1);
    events.stop();
  });
});
