import { describe, expect, test } from "bun:test";
import { createPod } from "../../src/api/resources/pods/pods-create.ts";
import { deletePod } from "../../src/api/resources/pods/pods-delete.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import { apiHarness, jsonRequest } from "../api-watch-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

/** The API over a fake-runtime agent whose pod writes go to its store, as `run` wires them. */
function writableApi(dir: string) {
  const h = apiHarness(dir);
  const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
  const api = { ...h.api, podWrites: sources.writes };
  const create = (body: unknown, query = "") => createPod(jsonRequest("POST", `/api/v1/namespaces/default/pods${query}`, { namespace: "default" }, body), api);
  const remove = (name: string, body?: unknown, query = "") => deletePod(jsonRequest("DELETE", `/api/v1/namespaces/default/pods/${name}${query}`, { namespace: "default", name }, body), api);
  return { h, sources, api, create, remove };
}

const web = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "app", image: "busybox", command: ["sleep", "60"] }] } };

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("the request was accepted");
}

describe("pod writes over HTTP", () => {
  test("a create answers 201 with the stored pod's uid and resourceVersion; the object carries what the server set", async () => {
    using dir = tempDir();
    const { h, sources, create } = writableApi(dir.path);
    const response = await create({ ...web, metadata: { ...web.metadata, uid: "mine", resourceVersion: "7" }, status: { phase: "Running" } });
    expect(response.status).toBe(201);
    const body = (await response.json()) as any;
    const stored = sources.writes.store.get("default", "web")!;
    expect(body.metadata).toMatchObject({ name: "web", namespace: "default", uid: stored.uid, resourceVersion: String(stored.resourceVersion) });
    expect(stored.uid).not.toBe("mine");
    expect(body.status.phase).toBe("Pending");
    expect(stored.object.status).toBeUndefined();
    h.close();
  });

  test("lifecycle hooks: a sleep past the grace or below 0 is a 422 with the API server's message and path; postStart is created", async () => {
    using dir = tempDir();
    const { h, create } = writableApi(dir.path);
    const withLifecycle = (lifecycle: unknown, grace = 5) => ({ ...web, spec: { terminationGracePeriodSeconds: grace, containers: [{ ...web.spec.containers[0], lifecycle }] } });
    const long = await refusal(create(withLifecycle({ preStop: { sleep: { seconds: 6 } } })));
    expect(long.code).toBe(422);
    expect(long.message).toBe('Pod "web" is invalid: spec.containers[0].lifecycle.preStop.sleep: Invalid value: 6: must be non-negative and less than terminationGracePeriodSeconds (5)');
    const negative = await refusal(create(withLifecycle({ postStart: { sleep: { seconds: -1 } } })));
    expect(negative.details!.causes).toEqual([{ reason: "FieldValueInvalid", message: "Invalid value: -1: must be non-negative and less than terminationGracePeriodSeconds (5)", field: "spec.containers[0].lifecycle.postStart.sleep" }]);
    const created = (await (await create(withLifecycle({ postStart: { exec: { command: ["true"] } }, preStop: { sleep: { seconds: 0 } } }))).json()) as any;
    expect(created.spec.containers[0].lifecycle).toEqual({ postStart: { exec: { command: ["true"] } }, preStop: { sleep: { seconds: 0 } } });
    h.close();
  });

  test("resources: a request above its limit is a 422 in the API server's words, a malformed quantity its 400, and a created pod serves canonical quantities", async () => {
    using dir = tempDir();
    const { h, create } = writableApi(dir.path);
    const withResources = (resources: unknown) => ({ ...web, spec: { containers: [{ ...web.spec.containers[0], resources }] } });
    const over = await refusal(create(withResources({ limits: { cpu: "500m" }, requests: { cpu: "0.6" } })));
    expect(over.code).toBe(422);
    expect(over.message).toBe('Pod "web" is invalid: spec.containers[0].resources.requests: Invalid value: "600m": must be less than or equal to cpu limit of 500m');
    const malformed = await refusal(create(withResources({ limits: { memory: "1 GB" } })));
    expect(malformed.code).toBe(400);
    expect(malformed.message).toBe(`Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
    const hugePages = await refusal(create(withResources({ limits: { "hugepages-2Mi": "2Mi" } })));
    expect(hugePages.details!.causes).toEqual([{ reason: "FieldValueForbidden", message: "Forbidden: HugePages require cpu or memory", field: "spec.containers[0].resources" }]);
    const created = (await (await create(withResources({ limits: { cpu: "0.5", memory: "1024Mi" } }))).json()) as any;
    expect(created.spec.containers[0].resources).toEqual({ limits: { cpu: "500m", memory: "1Gi" }, requests: { cpu: "500m", memory: "1Gi" } });
    expect(created.status.qosClass).toBe("Guaranteed");
    h.close();
  });

  test("an invalid pod is a 422 with one cause per field; unknown fields are a 400 only under fieldValidation=Strict", async () => {
    using dir = tempDir();
    const { h, sources, create } = writableApi(dir.path);
    const invalid = await refusal(create({ ...web, spec: { restartPolicy: "Sometimes", containers: [{ name: "app" }] } }));
    expect(invalid.code).toBe(422);
    expect(invalid.details!.causes!.map((cause) => `${cause.field}: ${cause.message.split(":")[0]}`).sort()).toEqual([
      "spec.containers[0].image: Required value",
      "spec.containers[0]: Required value",
      "spec.restartPolicy: Invalid value",
    ]);
    const typo = { ...web, spec: { containers: [{ ...web.spec.containers[0], comand: ["x"] }] } };
    const strict = await refusal(create(typo, "?fieldValidation=Strict"));
    expect(strict.code).toBe(400);
    expect(strict.message).toBe('strict decoding error: unknown field "spec.containers[0].comand"');
    const warned = await create(typo, "?fieldValidation=Warn");
    expect(warned.status).toBe(201);
    expect(warned.headers.get("Warning")).toBe('299 - "unknown field \\"spec.containers[0].comand\\""');
    expect(sources.writes.store.list().map((pod) => pod.name)).toEqual(["web"]);
    h.close();
  });

  test("a body without apiVersion and kind takes them from the URL, as the API server defaults the GVK from the request path", async () => {
    using dir = tempDir();
    const { h, sources, create } = writableApi(dir.path);
    const { apiVersion: _apiVersion, kind: _kind, ...bare } = web;
    const response = await create(bare);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ apiVersion: "v1", kind: "Pod", metadata: { name: "web" } });
    expect(sources.writes.store.get("default", "web")!.object).toMatchObject({ apiVersion: "v1", kind: "Pod" });
    const kindOnly = await create({ ...bare, kind: "Pod", metadata: { name: "web2" } });
    expect(kindOnly.status).toBe(201);
    h.close();
  });

  test("a body of another kind or version is the API server's 400: it cannot be handled as a Pod", async () => {
    using dir = tempDir();
    const { h, create } = writableApi(dir.path);
    const service = await refusal(create({ ...web, kind: "Service" }));
    expect(service.toStatus()).toMatchObject({ code: 400, reason: "BadRequest", message: 'Service in version "v1" cannot be handled as a Pod: converting (v1.Service) to (core.Pod): unknown conversion' });
    const v2 = await refusal(create({ ...web, apiVersion: "v2" }));
    expect(v2.message).toBe('Pod in version "v2" cannot be handled as a Pod: no kind "Pod" is registered for version "v2"');
    const deployment = await refusal(create({ ...web, apiVersion: "apps/v1", kind: "Deployment" }));
    expect(deployment.message).toBe('Deployment in version "v1" cannot be handled as a Pod: converting (v1.Deployment) to (core.Pod): unknown conversion');
    h.close();
  });

  test("on the process runtime, args without command are a valid pod (kubectl run NAME --image=busybox -- sleep 10): args[0] is the program", async () => {
    using dir = tempDir();
    const { h, sources, create } = writableApi(dir.path);
    const response = await create({ ...web, spec: { containers: [{ name: "app", image: "busybox", args: ["sleep", "10"] }] } });
    expect(response.status).toBe(201);
    expect((await response.json()) as unknown).toMatchObject({ spec: { containers: [{ args: ["sleep", "10"] }] } });
    expect(sources.writes.store.get("default", "web")).toBeDefined();
    const neither = await refusal(create({ ...web, metadata: { name: "neither" }, spec: { containers: [{ name: "app", image: "busybox" }] } }));
    expect(neither.message).toBe('Pod "neither" is invalid: spec.containers[0]: Required value: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)');
    h.close();
  });

  test("a delete takes its grace from DeleteOptions, else the query, else the pod; preconditions and dryRun are honoured", async () => {
    using dir = tempDir();
    const { h, sources, create, remove } = writableApi(dir.path);
    await create({ ...web, spec: { ...web.spec, terminationGracePeriodSeconds: 7 } });
    const stored = sources.writes.store.get("default", "web")!;
    const stale = await refusal(remove("web", { preconditions: { uid: "other" } }));
    expect(stale.code).toBe(409);
    expect(stale.message).toBe(`Precondition failed: UID in precondition: other, UID in object meta: ${stored.uid}`);
    const dry = (await (await remove("web", { gracePeriodSeconds: 3 }, "?dryRun=All")).json()) as any;
    expect(dry.metadata.deletionGracePeriodSeconds).toBe(3);
    expect(sources.writes.store.get("default", "web")!.deletion).toBeUndefined();
    expect(((await (await remove("web", undefined, "?gracePeriodSeconds=5")).json()) as any).metadata.deletionGracePeriodSeconds).toBe(5);
    expect(((await (await remove("web", { gracePeriodSeconds: 2 }, "?gracePeriodSeconds=4")).json()) as any).metadata.deletionGracePeriodSeconds).toBe(2);
    expect(sources.writes.store.get("default", "web")!.deletion!.gracePeriodSeconds).toBe(2);
    expect((await refusal(remove("web", { gracePeriodSeconds: -1 }))).code).toBe(400);
    await create({ ...web, metadata: { name: "own" }, spec: { ...web.spec, terminationGracePeriodSeconds: 7 } });
    expect(((await (await remove("own", { propagationPolicy: "Background" })).json()) as any).metadata.deletionGracePeriodSeconds).toBe(7);
    expect((await refusal(remove("nope"))).code).toBe(404);
    h.close();
  });

  test("a body nested past the JSON decoder's 10,000 levels is its 400, and annotations over 256 KiB a 422, neither stored", async () => {
    using dir = tempDir();
    const { h, sources, create } = writableApi(dir.path);
    const deep = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"x":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}`;
    const tooDeep = await refusal(create(deep));
    expect(tooDeep.code).toBe(400);
    expect(tooDeep.message).toBe(`the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: invalid character '{' exceeded max depth (${deep.slice(0, 30)} ...)`);
    // Brackets inside strings are text, not depth.
    expect((await create({ ...web, metadata: { name: "text", annotations: { note: "[{".repeat(20_000) } } })).status).toBe(201);
    const big = await refusal(create({ ...web, metadata: { name: "big", annotations: { "example.com/big": "x".repeat(300 * 1024) } } }));
    expect(big.code).toBe(422);
    expect(big.details?.causes).toEqual([{ reason: "FieldValueTooLong", message: "Too long: must have at most 262144 bytes", field: "metadata.annotations" }]);
    expect(sources.writes.store.get("default", "deep")).toBeUndefined();
    expect(sources.writes.store.get("default", "big")).toBeUndefined();
    h.close();
  });
});
