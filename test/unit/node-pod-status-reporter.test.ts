/**
 * The status queue toward the API server, against a fake API server that answers as the real one
 * does (a status patch applied to its stored pod, a uid precondition that refuses another pod of
 * the name, an outage), stepped by the fake clock.
 */
import { describe, expect, test } from "bun:test";
import { ClusterApiError, PATCH_TYPE, type ClusterApi, type ClusterRequest } from "../../src/node/cluster-client.ts";
import { PodStatusReporter } from "../../src/node/pod-status-reporter.ts";
import type { V1PodStatus } from "../../src/v1/v1.ts";
import { FakeClock } from "../fake-clock.ts";

interface StoredPod {
  uid: string;
  resourceVersion: number;
  status: Record<string, unknown>;
}

/** A tiny API server for pods: status patches merge field by field (enough for these statuses), deletes honour the uid precondition. */
class FakeApiServer implements Pick<ClusterApi, "request"> {
  readonly pods = new Map<string, StoredPod>();
  readonly requests: ClusterRequest[] = [];
  down = false;
  private version = 1;
  /** Requests held until released, to test what queues behind one in flight. */
  hold?: Promise<void>;

  add(name: string, uid: string, status: Record<string, unknown> = { phase: "Pending" }): void {
    this.pods.set(name, { uid, resourceVersion: this.version++, status });
  }

  async request<T>(request: ClusterRequest): Promise<T> {
    this.requests.push(request);
    await this.hold;
    if (this.down) throw new ClusterApiError(0, "ServiceUnavailable", `${request.method} ${request.path}: connection refused`, request);
    const name = request.path.split("/")[6]!;
    const pod = this.pods.get(name);
    if (!pod) throw new ClusterApiError(404, "NotFound", `pods "${name}" not found`, request);
    const body = request.body as Record<string, any>;
    const uid = request.method === "PATCH" ? body.metadata?.uid : body.preconditions?.uid;
    if (uid !== undefined && uid !== pod.uid) throw new ClusterApiError(409, "Conflict", `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.uid}`, request);
    if (request.method === "DELETE") {
      this.pods.delete(name);
      return {} as T;
    }
    expect(request.contentType).toBe(PATCH_TYPE.strategic);
    for (const [field, value] of Object.entries(body.status as Record<string, unknown>)) {
      if (field.startsWith("$")) continue;
      if (value === null) delete pod.status[field];
      else pod.status[field] = value;
    }
    pod.resourceVersion = this.version++;
    return { metadata: { uid: pod.uid, resourceVersion: String(pod.resourceVersion) }, status: structuredClone(pod.status) } as T;
  }

  count(method: string): number {
    return this.requests.filter((request) => request.method === method).length;
  }
}

const web = { namespace: "default", name: "web", uid: "uid-1" };
const running = (restartCount: number) => ({ phase: "Running", containerStatuses: [{ name: "web", restartCount, ready: true }] }) as V1PodStatus;

function setup(options: { maxInFlight?: number } = {}) {
  const api = new FakeApiServer();
  const clock = new FakeClock();
  const lines: string[] = [];
  const reporter = new PodStatusReporter({ client: api, clock, log: (line) => lines.push(line), retry: { baseMs: 1000, capMs: 8000 }, ...options });
  return { api, clock, lines, reporter };
}

describe("PodStatusReporter", () => {
  test("a status reaches the API server once; the same status again is no request", async () => {
    const { api, reporter } = setup();
    api.add("web", "uid-1");
    reporter.observe(web, { phase: "Pending" } as V1PodStatus, "1");
    reporter.report(web, running(0));
    await reporter.idle();
    expect(api.pods.get("web")!.status).toMatchObject({ phase: "Running", containerStatuses: [{ name: "web", restartCount: 0, ready: true }] });
    reporter.report(web, running(0));
    await reporter.idle();
    expect(api.count("PATCH")).toBe(1);
    expect((api.requests[0]!.body as Record<string, any>).metadata).toEqual({ uid: "uid-1" });
  });

  test("statuses queued behind one in flight are coalesced: only the newest is sent", async () => {
    const { api, reporter } = setup();
    api.add("web", "uid-1");
    let release!: () => void;
    api.hold = new Promise((resolve) => (release = resolve));
    reporter.report(web, running(0));
    for (let restarts = 1; restarts <= 5; restarts++) reporter.report(web, running(restarts));
    api.hold = undefined;
    release();
    await reporter.idle();
    expect(api.count("PATCH")).toBe(2);
    expect((api.pods.get("web")!.status.containerStatuses as { restartCount: number }[])[0]!.restartCount).toBe(5);
  });

  test("an unreachable API server: retried on a capped doubling, one log line down and one up, the newest status wins", async () => {
    const { api, clock, lines, reporter } = setup();
    api.add("web", "uid-1");
    api.down = true;
    reporter.report(web, running(0));
    await Bun.sleep(0);
    const waits: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = clock.now();
      const due = clock.nextDueAt()!;
      waits.push(due - before);
      clock.step(due - before);
      await Bun.sleep(0);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain("lost the API server");
    reporter.report(web, running(3));
    api.down = false;
    clock.step(clock.nextDueAt()! - clock.now());
    await reporter.idle();
    expect((api.pods.get("web")!.status.containerStatuses as { restartCount: number }[])[0]!.restartCount).toBe(3);
    expect(lines.length).toBe(2);
    expect(lines[1]).toContain("answers again");
  });

  test("the uid precondition: a status for an older pod of the same name is refused and dropped, never applied", async () => {
    const { api, reporter } = setup();
    api.add("web", "uid-2", { phase: "Pending" });
    reporter.report(web, running(0));
    await reporter.idle();
    expect(api.pods.get("web")!.status).toEqual({ phase: "Pending" });
    expect(reporter.settled("uid-1")).toBe(true);
  });

  test("the final delete: after the terminal status, with grace 0 and the uid precondition", async () => {
    const { api, reporter } = setup();
    api.add("web", "uid-1", { phase: "Running" });
    reporter.report(web, { phase: "Succeeded" } as V1PodStatus, { finish: true });
    await reporter.idle();
    expect(api.requests.map((request) => request.method)).toEqual(["PATCH", "DELETE"]);
    expect(api.requests[1]!.body).toEqual({ apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions: { uid: "uid-1" } });
    expect(api.pods.has("web")).toBe(false);
    // Deleted: a late pass's status asks nothing more.
    reporter.report(web, { phase: "Succeeded" } as V1PodStatus);
    await reporter.idle();
    expect(api.requests.length).toBe(2);
  });

  test("the final delete is retried until the API server takes it, and spares a newer pod of the name", async () => {
    const { api, clock, reporter } = setup();
    api.add("web", "uid-1", { phase: "Failed" });
    api.down = true;
    reporter.report(web, { phase: "Failed" } as V1PodStatus, { finish: true });
    await Bun.sleep(0);
    api.down = false;
    // Replaced meanwhile by a pod of the same name (a StatefulSet's): the precondition keeps it.
    api.add("web", "uid-9", { phase: "Pending" });
    clock.step(1000);
    await reporter.idle();
    expect(api.pods.get("web")!.uid).toBe("uid-9");
    expect(api.requests.at(-1)!.method).toBe("PATCH");
  });

  test("a status someone else overwrote (a newer resourceVersion that no longer says what the node reported) is written again", async () => {
    const { api, reporter } = setup();
    api.add("web", "uid-1");
    reporter.report(web, running(2));
    await reporter.idle();
    // The echo of the node's own write changes nothing.
    reporter.observe(web, structuredClone(api.pods.get("web")!.status) as V1PodStatus, String(api.pods.get("web")!.resourceVersion));
    await reporter.idle();
    expect(api.count("PATCH")).toBe(1);
    reporter.observe(web, { phase: "Pending" } as V1PodStatus, "1000");
    await reporter.idle();
    expect(api.count("PATCH")).toBe(2);
    expect(api.pods.get("web")!.status.phase).toBe("Running");
  });

  test("a readiness gate set True by another client makes the node patch Ready True", async () => {
    const api = new FakeApiServer();
    api.add("web", "uid-1");
    const clock = new FakeClock();
    const reporter = new PodStatusReporter({ client: api, clock, log: () => {} });
    const gated = { ...web, readinessGates: ["example.com/lb"] };
    reporter.report(gated, { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } as V1PodStatus);
    await reporter.idle();
    const stored = () => api.pods.get("web")!;
    expect((stored().status.conditions as any[]).find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "ReadinessGatesNotReady" });
    // The load balancer controller writes its condition; the watch brings the pod back.
    (stored().status.conditions as any[]).push({ type: "example.com/lb", status: "True" });
    stored().resourceVersion = 99;
    reporter.observe(gated, structuredClone(stored().status) as V1PodStatus, "99");
    await reporter.idle();
    expect((stored().status.conditions as any[]).find((c) => c.type === "Ready")).toMatchObject({ status: "True" });
  });

  test("at most maxInFlight requests at once over all pods", async () => {
    const { api, reporter } = setup({ maxInFlight: 2 });
    let release!: () => void;
    api.hold = new Promise((resolve) => (release = resolve));
    for (let i = 0; i < 5; i++) {
      api.add(`p${i}`, `u${i}`);
      reporter.report({ namespace: "default", name: `p${i}`, uid: `u${i}` }, running(0));
    }
    await Bun.sleep(0);
    expect(api.requests.length).toBe(2);
    api.hold = undefined;
    release();
    await reporter.idle();
    expect(api.count("PATCH")).toBe(5);
  });
});
