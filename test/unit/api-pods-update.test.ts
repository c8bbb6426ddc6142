/**
 * PATCH and PUT of an API pod through the routes, on a real agent database: what is stored, the
 * API server's refusals (422 with its update message, 409 on a stale resourceVersion, 405 for a
 * file's pod, 415 for an unknown patch type), dryRun and fieldValidation.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ApiContext, PodWrites } from "../../src/api/http/context.ts";
import type { ApiRequest } from "../../src/api/http/http.ts";
import { podUpdateRoutes } from "../../src/api/resources/pods/pods-update.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { admitApiPod } from "../../src/manifest/api-pod.ts";
import { POD_UPDATE_FORBIDDEN } from "../../src/manifest/pod-update.ts";
import { SqliteObjectStore } from "../../src/store/object-store.ts";
import { SqliteNamespaceStore } from "../../src/store/namespace-store.ts";
import { SqliteApiPodStore } from "../../src/store/api-pod-store.ts";
import { openAgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { apiContext } from "../api-objects-fixtures.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const WEB = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", labels: { app: "web" } },
  spec: { containers: [{ name: "web", image: "busybox:1", command: ["sleep", "1000"] }, { name: "side", image: "busybox:1", command: ["sleep", "1000"] }] },
};

function setup(path: string) {
  const agent = openAgentDatabase(join(path, "state.db"));
  const clock = new FakeClock();
  const store = new SqliteStore({ db: agent.db, clock });
  const apiPods = new SqliteApiPodStore(agent.db, store.revisions);
  apiPods.create({ uid: "uid-web", namespace: "default", name: "web", createdAt: clock.now(), object: structuredClone(WEB) });
  let wakes = 0;
  const podWrites: PodWrites = {
    store: apiPods,
    namespaces: new SqliteNamespaceStore(agent.db, store.revisions),
    objects: new SqliteObjectStore(agent.db, store.revisions),
    admit: (object, identity, strict, stage = "stored") => admitApiPod(object, { uid: identity.uid, node: "", label: "pod web", meta: { createdAt: identity.createdAt }, stage }, { runtime: "process", strict }),
    fileOf: (namespace, name) => (name === "static" ? "/manifests/static.yaml" : undefined),
    changed: () => void wakes++,
  };
  const api: ApiContext & Disposable = { ...apiContext(join(path, "state.db"), clock), podWrites };
  return { api, apiPods, wakes: () => wakes, [Symbol.dispose]: () => (api[Symbol.dispose](), agent.close()) };
}

async function send(api: ApiContext, method: "PATCH" | "PUT", name: string, body: unknown, options: { contentType?: string; query?: string } = {}) {
  const route = podUpdateRoutes.find((r) => r.method === method)!;
  const url = new URL(`https://127.0.0.1:6443/api/v1/namespaces/default/pods/${name}${options.query ? `?${options.query}` : ""}`);
  const request: ApiRequest = {
    method,
    url,
    headers: new Headers({ "content-type": options.contentType ?? (method === "PUT" ? "application/json" : "application/strategic-merge-patch+json") }),
    params: { namespace: "default", name },
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body)),
    upgrade: () => undefined,
  };
  try {
    const response = await route.handle(request, api);
    return { status: response.status, warnings: [...response.headers].filter(([key]) => key === "warning").map(([, value]) => value), body: (await response.json()) as any };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.code, warnings: [], body: error.toStatus() as any };
  }
}

const imagePatch = { spec: { "$setElementOrder/containers": [{ name: "web" }, { name: "side" }], containers: [{ name: "web", image: "busybox:2" }] } };

describe("PATCH and PUT of an API pod", () => {
  test("kubectl's strategic merge patch of an image is stored with a new resourceVersion, answered with the pod, and wakes the loop", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const before = s.apiPods.get("default", "web")!.resourceVersion;
    const answer = await send(s.api, "PATCH", "web", imagePatch);
    expect(answer.status).toBe(200);
    expect(answer.body.spec.containers.map((c: any) => c.image)).toEqual(["busybox:2", "busybox:1"]);
    expect(Number(answer.body.metadata.resourceVersion)).toBeGreaterThan(before);
    const stored = s.apiPods.get("default", "web")!;
    expect((stored.object.spec as any).containers.map((c: any) => c.image)).toEqual(["busybox:2", "busybox:1"]);
    expect(String(stored.resourceVersion)).toBe(answer.body.metadata.resourceVersion);
    expect(s.wakes()).toBe(1);
  });

  test("a second patch applies to the first one's result, and a patch carrying a stale resourceVersion is a 409", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const first = s.apiPods.get("default", "web")!.resourceVersion;
    await send(s.api, "PATCH", "web", imagePatch);
    expect((await send(s.api, "PATCH", "web", { metadata: { labels: { tier: "front" } } }, { contentType: "application/merge-patch+json" })).status).toBe(200);
    const stored = s.apiPods.get("default", "web")!.object as any;
    expect([stored.spec.containers[0].image, stored.metadata.labels]).toEqual(["busybox:2", { app: "web", tier: "front" }]);
    const stale = await send(s.api, "PATCH", "web", { metadata: { resourceVersion: String(first), labels: { tier: "back" } } }, { contentType: "application/merge-patch+json" });
    expect(stale.status).toBe(409);
  });

  test("a changed command is a 422 in the API server's words, and nothing is stored", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const answer = await send(s.api, "PATCH", "web", { spec: { containers: [{ name: "web", command: ["sleep", "5"] }] } });
    expect(answer.status).toBe(422);
    expect(answer.body.reason).toBe("Invalid");
    expect(answer.body.message).toStartWith(`Pod "web" is invalid: spec: Forbidden: ${POD_UPDATE_FORBIDDEN}\n`);
    expect(answer.body.details.causes).toEqual([expect.objectContaining({ reason: "FieldValueForbidden", field: "spec" })]);
    expect((s.apiPods.get("default", "web")!.object.spec as any).containers[0].command).toEqual(["sleep", "1000"]);
  });

  test("kubectl label's merge patch changes the labels; a JSON patch works on the served object", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    expect((await send(s.api, "PATCH", "web", { metadata: { labels: { tier: "front" } } }, { contentType: "application/merge-patch+json" })).status).toBe(200);
    expect(s.apiPods.get("default", "web")!.object.metadata).toMatchObject({ labels: { app: "web", tier: "front" } });
    const json = await send(s.api, "PATCH", "web", [{ op: "replace", path: "/spec/containers/1/image", value: "busybox:3" }], { contentType: "application/json-patch+json" });
    expect(json.status).toBe(200);
    expect(json.body.spec.containers[1].image).toBe("busybox:3");
  });

  test("a PUT with a stale resourceVersion is a 409 Conflict with the API server's message; the current one is accepted", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const current = s.apiPods.get("default", "web")!.resourceVersion;
    await send(s.api, "PATCH", "web", imagePatch);
    const replaced = { ...WEB, metadata: { ...WEB.metadata, resourceVersion: String(current) } };
    const stale = await send(s.api, "PUT", "web", replaced);
    expect(stale.status).toBe(409);
    expect(stale.body.message).toBe('Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again');
    const fresh = { ...replaced, metadata: { ...WEB.metadata, resourceVersion: String(s.apiPods.get("default", "web")!.resourceVersion) } };
    expect((await send(s.api, "PUT", "web", fresh)).status).toBe(200);
  });

  test("dryRun=All answers the updated pod and stores nothing", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const answer = await send(s.api, "PATCH", "web", imagePatch, { query: "dryRun=All" });
    expect(answer.status).toBe(200);
    expect(answer.body.spec.containers[0].image).toBe("busybox:2");
    expect((s.apiPods.get("default", "web")!.object.spec as any).containers[0].image).toBe("busybox:1");
    expect(s.wakes()).toBe(0);
  });

  test("fieldValidation: an unknown field is a warning by default and a 400 strict decoding error under Strict", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const typo = { spec: { containers: [{ name: "web", image: "busybox:2", comand: ["x"] }] } };
    const strict = await send(s.api, "PATCH", "web", typo, { query: "fieldValidation=Strict" });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(`strict decoding error: unknown field "spec.containers[0].comand"`);
    const warned = await send(s.api, "PATCH", "web", typo);
    expect(warned.status).toBe(200);
    expect(warned.warnings).toEqual(['299 - "unknown field \\"spec.containers[0].comand\\""']);
    // Dropped as the API server drops it when decoding: neither stored nor taken for a change of the spec.
    expect((s.apiPods.get("default", "web")!.object.spec as any).containers[0]).toEqual({
      name: "web",
      image: "busybox:2",
      command: ["sleep", "1000"],
      // Stored as decoded: the API's defaults, and no unknown field.
      imagePullPolicy: "IfNotPresent",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      resources: {},
    });
  });

  test("an unknown pod is a 404; an unknown patch type a 415 (a file's pod: see the kubectl tests)", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    expect((await send(s.api, "PATCH", "nope", imagePatch)).status).toBe(404);
    expect((await send(s.api, "PATCH", "web", imagePatch, { contentType: "text/plain" })).status).toBe(415);
  });
});

describe("updates of a pod with resources", () => {
  test("a quantity written another way is no change (the API server stores 0.5 as 500m); a new value is", async () => {
    using dir = tempDir();
    using h = setup(dir.path);
    const sized = (cpu: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "sized", namespace: "default" },
      spec: { containers: [{ name: "web", image: "busybox:1", command: ["sleep", "1000"], resources: { limits: { cpu } } }] },
    });
    h.apiPods.create({ uid: "uid-sized", namespace: "default", name: "sized", createdAt: 0, object: sized("0.5") });
    const same = await send(h.api, "PUT", "sized", sized("500m"));
    expect(same.status).toBe(200);
    expect(same.body.spec.containers[0].resources).toEqual({ limits: { cpu: "500m" }, requests: { cpu: "500m" } });
    const changed = await send(h.api, "PUT", "sized", sized("1"));
    expect(changed.status).toBe(422);
    expect(changed.body.message).toContain(POD_UPDATE_FORBIDDEN);
  });
});

/** `{"a":{"a":...1...}}`, `depth` objects deep. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

describe("the API server's bounds on a write's body", () => {
  test("a patch nested past 10,000 levels is the JSON decoder's 400 for every patch type; one just under is answered, never a 500", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const deep = nested(100_000);
    const bodies = {
      "application/strategic-merge-patch+json": `{"metadata":{"labels":${deep}}}`,
      "application/merge-patch+json": `{"x":${deep}}`,
      "application/json-patch+json": `[{"op":"add","path":"/metadata/x","value":${deep}}]`,
    };
    for (const [contentType, body] of Object.entries(bodies)) {
      const answer = await send(s.api, "PATCH", "web", body, { contentType });
      expect({ contentType, status: answer.status, reason: answer.body.reason, message: answer.body.message }).toEqual({
        contentType,
        status: 400,
        reason: "BadRequest",
        message: "error decoding patch: invalid character '{' exceeded max depth",
      });
    }
    const underLimit = await send(s.api, "PATCH", "web", `{"x":${nested(9_998)}}`, { contentType: "application/merge-patch+json" });
    expect(underLimit.status).toBeLessThan(500);
    expect((await send(s.api, "PATCH", "web", { metadata: { labels: { ok: "yes" } } })).status).toBe(200);
  });

  test("a JSON patch of more than 10,000 operations is the API server's 413; 10,000 are applied", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const ops = (count: number) => Array.from({ length: count }, () => ({ op: "test", path: "/metadata/name", value: "web" }));
    const tooMany = await send(s.api, "PATCH", "web", ops(90_000), { contentType: "application/json-patch+json" });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatchObject({ reason: "RequestEntityTooLarge", message: "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 90000", code: 413 });
    expect((await send(s.api, "PATCH", "web", ops(10_000), { contentType: "application/json-patch+json" })).status).toBe(200);
  });

  test("annotations over 256 KiB in all are a 422 on metadata.annotations (ValidateAnnotationsSize), by patch or by update", async () => {
    using dir = tempDir();
    using s = setup(dir.path);
    const big = { "example.com/big": "x".repeat(300 * 1024) };
    const cause = { reason: "FieldValueTooLong", message: "Too long: must have at most 262144 bytes", field: "metadata.annotations" };
    const patched = await send(s.api, "PATCH", "web", { metadata: { annotations: big } }, { contentType: "application/merge-patch+json" });
    expect(patched.status).toBe(422);
    expect(patched.body.details.causes).toEqual([cause]);
    expect(patched.body.message).toBe('Pod "web" is invalid: metadata.annotations: Too long: must have at most 262144 bytes');
    const replaced = await send(s.api, "PUT", "web", { ...WEB, metadata: { ...WEB.metadata, annotations: big } });
    expect(replaced.status).toBe(422);
    expect(replaced.body.details.causes).toEqual([cause]);
    expect(s.apiPods.get("default", "web")!.object.metadata).not.toHaveProperty("annotations");
    // Exactly the limit, keys counted with values, is accepted.
    const key = "example.com/big";
    const atLimit = await send(s.api, "PATCH", "web", { metadata: { annotations: { [key]: "x".repeat(256 * 1024 - key.length) } } }, { contentType: "application/merge-patch+json" });
    expect(atLimit.status).toBe(200);
  });
});
