import { expect, test } from "bun:test";
import { eventRoutes } from "../../src/api/resources/events-api.ts";
import { apiFailedEvent } from "../../src/agent/api.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { apiContext, call, TABLE_ACCEPT } from "../api-objects-fixtures.ts";

async function crashLoop(dir: string) {
  const h = storeHarness(dir);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] }), pod({ name: "web" }), pod({ name: "web", namespace: "prod", revision: 2 })));
  await h.advance(60);
  return h;
}

test("the event list is an EventList of v1 Events as the kubelet posts them", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const list = await call(eventRoutes, "GET", "/api/v1/namespaces/demo/events", api, { accept: "application/vnd.kubernetes.protobuf,application/json" });
  expect(list.body.kind).toBe("EventList");
  expect(Number(list.body.metadata.resourceVersion)).toBe(api.store.revision());
  const backoff = list.body.items.find((e: any) => e.reason === "BackOff");
  const crashUid = api.store.findPod("crash-lab", "demo")!.uid;
  expect(backoff).toMatchObject({
    kind: "Event",
    apiVersion: "v1",
    metadata: { namespace: "demo" },
    involvedObject: { kind: "Pod", namespace: "demo", name: "crash-lab", uid: crashUid, apiVersion: "v1", fieldPath: "spec.containers{crash}" },
    type: "Warning",
    count: 3,
    firstTimestamp: "2026-01-01T12:00:02Z",
    lastTimestamp: "2026-01-01T12:00:34Z",
    eventTime: null,
    source: { component: "kubelet", host: "lab" },
    reportingComponent: "kubelet",
  });
  expect(backoff.metadata.name).toMatch(/^crash-lab\.[0-9a-f]{16}$/);
  const names = list.body.items.map((e: any) => e.metadata.name);
  expect(new Set(names).size).toBe(names.length);
  // Stable: the same row has the same name and uid on the next request.
  const again = await call(eventRoutes, "GET", "/api/v1/namespaces/demo/events", api);
  expect(again.body.items.map((e: any) => [e.metadata.name, e.metadata.uid])).toEqual(list.body.items.map((e: any) => [e.metadata.name, e.metadata.uid]));
  // All namespaces, oldest last occurrence first (kubectl's order).
  const all = await call(eventRoutes, "GET", "/api/v1/events", api);
  expect(all.body.items.some((e: any) => e.metadata.namespace === "prod")).toBe(true);
  const last = all.body.items.map((e: any) => e.lastTimestamp);
  expect(last).toEqual([...last].sort());
  h.agent.close();
});

test("field selectors as describe pod, kubectl events --for and get events send them, in any order", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const uid = api.store.findPod("crash-lab", "demo")!.uid;
  const select = async (fieldSelector: string, path = "/api/v1/namespaces/demo/events") =>
    (await call(eventRoutes, "GET", path, api, { query: { fieldSelector, limit: "500" } })).body.items as any[];
  const describe = await select(`involvedObject.uid=${uid},involvedObject.name=crash-lab,involvedObject.namespace=demo`);
  expect(new Set(describe.map((e) => e.involvedObject.name))).toEqual(new Set(["crash-lab"]));
  expect(describe.map((e) => e.reason)).toContain("BackOff");
  expect(await select(`involvedObject.name=crash-lab,involvedObject.uid=other`)).toEqual([]);
  const forPod = await select("involvedObject.kind=Pod,involvedObject.apiVersion=v1,involvedObject.name=web-lab", "/api/v1/events");
  expect(new Set(forPod.map((e) => e.metadata.namespace))).toEqual(new Set(["demo", "prod"]));
  expect((await select("reason=BackOff")).map((e) => e.involvedObject.name)).toEqual(["crash-lab"]);
  expect((await select("type=Warning")).map((e) => e.reason).sort()).toEqual(["BackOff", "Exited"]);
  expect((await select("type!=Warning,source=kubelet")).every((e) => e.type === "Normal")).toBe(true);
  expect(await select("involvedObject.fieldPath=spec.containers{web}")).toHaveLength(2);
  // describe node asks for the node's events: none, and no error.
  expect(await select("involvedObject.name=lab,involvedObject.namespace=,involvedObject.kind=Node,involvedObject.uid=lab", "/api/v1/events")).toEqual([]);
  const bad = await call(eventRoutes, "GET", "/api/v1/events", api, { query: { fieldSelector: "involvedObject.color=red" } });
  expect(bad).toMatchObject({ status: 400, body: { reason: "BadRequest", message: "field label not supported: involvedObject.color" } });
  h.agent.close();
});

test("the event Table has the API server's columns; one event by name; a missing one is NotFound", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const table = await call(eventRoutes, "GET", "/api/v1/namespaces/demo/events", api, { accept: TABLE_ACCEPT, query: { fieldSelector: "reason=BackOff" } });
  expect(table.body.columnDefinitions.map((c: any) => `${c.name}${c.priority ? "*" : ""}`)).toEqual([
    "Last Seen",
    "Type",
    "Reason",
    "Object",
    "Subobject*",
    "Source*",
    "Message",
    "First Seen*",
    "Count*",
    "Name*",
  ]);
  const [row] = table.body.rows;
  expect(row.cells.slice(0, 9)).toEqual(["26s", "Warning", "BackOff", "pod/crash-lab", "spec.containers{crash}", "kubelet, lab", "Back-off restarting failed container crash in pod crash-lab", "58s", 3]);
  const name = row.cells[9];
  const one = await call(eventRoutes, "GET", `/api/v1/namespaces/demo/events/${name}`, api);
  expect(one.body).toMatchObject({ kind: "Event", reason: "BackOff", metadata: { name } });
  const missing = await call(eventRoutes, "GET", "/api/v1/namespaces/demo/events/crash-lab.00000000000000ff", api);
  expect(missing).toMatchObject({ status: 404, body: { reason: "NotFound", message: 'events "crash-lab.00000000000000ff" not found' } });
  h.agent.close();
});

test("events page by limit and continue in kubectl's order, without losing or repeating one", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  using api = apiContext(h.dbPath, h.clock);
  const everything = (await call(eventRoutes, "GET", "/api/v1/events", api)).body.items.map((e: any) => e.metadata.name);
  const seen: string[] = [];
  let token: string | undefined;
  do {
    const pageOf = await call(eventRoutes, "GET", "/api/v1/events", api, { query: { limit: "4", ...(token && { continue: token }) } });
    expect(pageOf.body.items.length).toBeLessThanOrEqual(4);
    seen.push(...pageOf.body.items.map((e: any) => e.metadata.name));
    token = pageOf.body.metadata.continue;
  } while (token);
  // Same events, same order (oldest last occurrence first) as one unpaged list.
  expect(seen).toEqual(everything);
  h.agent.close();
});

test("the node's own events are about the Node, found by the selector describe node sends", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  h.store.saveEvents([apiFailedEvent("lab", "the address is already in use", h.clock.now())]);
  using api = apiContext(h.dbPath, h.clock);
  const selector = "involvedObject.name=lab,involvedObject.namespace=,involvedObject.kind=Node,involvedObject.uid=lab";
  const found = await call(eventRoutes, "GET", "/api/v1/events", api, { query: { fieldSelector: selector, limit: "500" } });
  expect(found.body.items).toHaveLength(1);
  expect(found.body.items[0]).toMatchObject({ reason: "APIListenFailed", metadata: { namespace: "default" }, involvedObject: { kind: "Node", name: "lab", namespace: "", uid: "lab" } });
  const table = await call(eventRoutes, "GET", "/api/v1/events", api, { accept: TABLE_ACCEPT, query: { fieldSelector: "reason=APIListenFailed" } });
  expect(table.body.rows[0].cells[3]).toBe("node/lab");
  h.agent.close();
});
