import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import type { ApiContext } from "../../src/api/http/context.ts";
import type { ApiRequest, Route } from "../../src/api/http/http.ts";
import { documentUrl, openApiDocuments, openApiRoutes } from "../../src/api/discovery/openapi.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { FakeClock } from "../fake-clock.ts";

type Schema = Record<string, any>;

const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
// These routes read nothing but the clock.
const api = { clock } as unknown as ApiContext;

function route(path: string): Route {
  const found = openApiRoutes.find((r) => r.method === "GET" && r.path === path);
  if (!found) throw new Error(`no GET ${path}`);
  return found;
}

function request(target: string, headers: Record<string, string> = {}): ApiRequest {
  const url = new URL(target, "https://127.0.0.1:6443");
  return {
    method: "GET",
    url,
    headers: new Headers(headers),
    params: {},
    query: url.searchParams,
    signal: new AbortController().signal,
    body: async () => new Uint8Array(),
    upgrade: () => undefined,
  };
}

async function get(path: string, target = path, headers: Record<string, string> = {}): Promise<Response> {
  return route(path).handle(request(target, headers), api);
}

async function fetchDocument(): Promise<Schema> {
  const index = (await (await get("/openapi/v3", "/openapi/v3?timeout=32s")).json()) as Schema;
  const url: string = index.paths["api/v1"].serverRelativeURL;
  return (await (await get("/openapi/v3/api/v1", `${url}&timeout=32s`, { Accept: "application/json" })).json()) as Schema;
}

const document = await fetchDocument();
const schemas: Record<string, Schema> = document.components.schemas;

/** Every `$ref` anywhere under `value`. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, found);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") found.push(item);
      else refs(item, found);
    }
  }
  return found;
}

function resolve(ref: string): Schema | undefined {
  return schemas[ref.replace("#/components/schemas/", "")];
}

describe("/openapi/v3", () => {
  test("the index names the api/v1 document by the upper-case SHA-512 of its bytes", async () => {
    const response = await get("/openapi/v3");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = await response.text();
    const { document: served } = openApiDocuments();
    const hash = createHash("sha512").update(served.body).digest("hex").toUpperCase();
    expect(JSON.parse(body)).toEqual({ paths: { "api/v1": { serverRelativeURL: `/openapi/v3/api/v1?hash=${hash}` } } });
    expect(response.headers.get("etag")).toBe(`"${createHash("sha512").update(body).digest("hex").toUpperCase()}"`);
  });

  test("a hashed document URL is immutable for a year and answers 304 to its ETag", async () => {
    const { document: served } = openApiDocuments();
    const response = await get("/openapi/v3/api/v1", documentUrl(served.hash), { Accept: "application/json" });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, immutable");
    expect(response.headers.get("expires")).toBe("Fri, 01 Jan 2027 12:00:00 GMT");
    expect(response.headers.get("vary")).toBe("Accept");
    const etag = response.headers.get("etag")!;
    expect(etag).toBe(`"${served.hash}"`);
    const again = await get("/openapi/v3/api/v1", documentUrl(served.hash), { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect((await get("/openapi/v3", "/openapi/v3", { "If-None-Match": `"${openApiDocuments().index.hash}"` })).status).toBe(304);
  });

  test("without a hash the document is served but not marked immutable", async () => {
    const response = await get("/openapi/v3/api/v1");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBeNull();
    expect(JSON.parse(await response.text()).openapi).toBe("3.0.0");
  });

  test("a stale hash is redirected (301) to the current document", async () => {
    const response = await get("/openapi/v3/api/v1", "/openapi/v3/api/v1?hash=0123ABCD");
    expect(response.status).toBe(301);
    expect(response.headers.get("location")).toBe(documentUrl(openApiDocuments().document.hash));
  });

  test("a client that takes only protobuf gets 406 NotAcceptable", async () => {
    const refused = get("/openapi/v3/api/v1", "/openapi/v3/api/v1", { Accept: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" });
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ code: 406, reason: "NotAcceptable" });
    expect((await get("/openapi/v3/api/v1", "/openapi/v3/api/v1", { Accept: "*/*" })).status).toBe(200);
  });
});

describe("the api/v1 document", () => {
  const kinds = [
    { kind: "Pod", paths: ["/api/v1/namespaces/{namespace}/pods", "/api/v1/namespaces/{namespace}/pods/{name}", "/api/v1/pods"] },
    { kind: "Node", paths: ["/api/v1/nodes", "/api/v1/nodes/{name}"] },
    { kind: "Event", paths: ["/api/v1/namespaces/{namespace}/events", "/api/v1/namespaces/{namespace}/events/{name}", "/api/v1/events"] },
  ];

  for (const { kind, paths } of kinds) {
    test(`${kind}: every operation's GVK deep-equals one of the schema's`, () => {
      const schemaGvks = schemas[`io.k8s.api.core.v1.${kind}`]!["x-kubernetes-group-version-kind"];
      expect(schemaGvks).toEqual([{ group: "", kind, version: "v1" }]);
      const methods: string[] = [];
      for (const path of paths) {
        const item = document.paths[path];
        expect(item).toBeDefined();
        for (const method of ["get", "post", "put", "patch", "delete"]) {
          if (!item[method]) continue;
          methods.push(method);
          expect(schemaGvks).toContainEqual(item[method]["x-kubernetes-group-version-kind"]);
        }
      }
      expect(new Set(methods)).toEqual(new Set(["get", "post", "put", "patch", "delete"]));
    });

    test(`${kind}: PATCH lists the fieldValidation query parameter (kubectl apply checks it)`, () => {
      const patch = document.paths[paths[1]!].patch;
      expect(patch.parameters).toContainEqual(expect.objectContaining({ name: "fieldValidation", in: "query" }));
    });
  }

  test("the Pod's keyed lists carry their patch strategy and merge key, which kubectl's apply builds its strategic merge patch from", () => {
    const properties = (id: string) => schemas[`io.k8s.api.core.v1.${id}`]!.properties;
    const patchMeta = (schema: Schema) => [schema["x-kubernetes-patch-strategy"], schema["x-kubernetes-patch-merge-key"]];
    expect(patchMeta(properties("PodSpec").containers)).toEqual(["merge", "name"]);
    expect(patchMeta(properties("PodSpec").volumes)).toEqual(["merge,retainKeys", "name"]);
    expect(patchMeta(properties("Container").ports)).toEqual(["merge", "containerPort"]);
    expect(patchMeta(properties("Container").volumeMounts)).toEqual(["merge", "mountPath"]);
    expect(patchMeta(properties("PodSpec").tolerations)).toEqual([undefined, undefined]);
    expect(patchMeta(properties("Container").command)).toEqual([undefined, undefined]);
  });

  test("every $ref resolves to a schema in the document", () => {
    const all = refs(document);
    expect(all.length).toBeGreaterThan(100);
    const missing = all.filter((ref) => !resolve(ref));
    expect(missing).toEqual([]);
  });

  test("only schemas the kinds reach are embedded", () => {
    const reached = new Set<string>();
    const pending = refs(document.paths);
    while (pending.length > 0) {
      const ref = pending.pop()!;
      if (reached.has(ref)) continue;
      reached.add(ref);
      pending.push(...refs(resolve(ref)));
    }
    expect(Object.keys(schemas).filter((id) => !reached.has(`#/components/schemas/${id}`))).toEqual([]);
  });

  test("pod.spec.containers.livenessProbe carries the API's field documentation", () => {
    const refOf = (schema: Schema): string => schema.$ref ?? schema.allOf[0].$ref;
    const container = resolve(refOf(schemas["io.k8s.api.core.v1.PodSpec"]!.properties.containers.items))!;
    expect(container.required).toContain("name");
    const liveness = container.properties.livenessProbe;
    expect(liveness.description).toStartWith("Periodic probe of container liveness.");
    const probe = resolve(refOf(liveness))!;
    expect(probe.description).toStartWith("Probe describes a health check");
    expect(probe.properties.periodSeconds).toMatchObject({ type: "integer" });
    expect(probe.properties.periodSeconds.description).toContain("How often (in seconds) to perform the probe.");
    expect(container.properties.imagePullPolicy).toMatchObject({ type: "string" });
    expect(container.properties.imagePullPolicy.description).toStartWith("Image pull policy. One of Always, Never, IfNotPresent.");
  });
});

/** Reads one protobuf message's length-delimited fields as (field number, bytes) pairs, in order. */
function protoFields(data: Uint8Array): Array<[number, Uint8Array]> {
  const fields: Array<[number, Uint8Array]> = [];
  let offset = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = data[offset++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (offset < data.length) {
    const tag = varint();
    if ((tag & 7) !== 2) throw new Error(`field ${tag >> 3} is not length-delimited`);
    const length = varint();
    fields.push([tag >> 3, data.subarray(offset, offset + length)]);
    offset += length;
  }
  return fields;
}

const text = (data: Uint8Array) => new TextDecoder().decode(data);
const field = (data: Uint8Array, number: number) => protoFields(data).filter(([n]) => n === number).map(([, bytes]) => bytes);
/** A gnostic map (repeated Named* {name = 1, value = 2}) as a JS Map. */
const named = (entries: Uint8Array[]) => new Map(entries.map((entry) => [text(field(entry, 1)[0]!), field(entry, 2)[0]!]));

describe("/openapi/v2 (kubectl 1.27 and 1.28 read it before explain)", () => {
  const accept = { Accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" };

  test("is a protobuf openapi.v2.Document whose definitions carry descriptions, references and GVKs", async () => {
    const response = await get("/openapi/v2", "/openapi/v2?timeout=32s", accept);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    const body = new Uint8Array(await response.arrayBuffer());
    expect(text(field(body, 1)[0]!)).toBe("2.0");
    const definitions = named(field(field(body, 9)[0]!, 1));
    expect(new Set(definitions.keys())).toEqual(new Set(Object.keys(schemas)));

    const pod = definitions.get("io.k8s.api.core.v1.Pod")!;
    const extensions = named(field(pod, 31));
    expect(JSON.parse(text(field(extensions.get("x-kubernetes-group-version-kind")!, 2)[0]!))).toEqual([{ group: "", kind: "Pod", version: "v1" }]);
    const spec = named(field(field(pod, 25)[0]!, 1)).get("spec")!;
    expect(text(field(spec, 1)[0]!)).toBe("#/definitions/io.k8s.api.core.v1.PodSpec");
    expect(text(field(spec, 4)[0]!)).toStartWith("Specification of the desired behavior of the pod.");

    const container = definitions.get("io.k8s.api.core.v1.Container")!;
    expect(field(container, 19).map(text)).toEqual(["name"]);
    const ports = named(field(field(container, 25)[0]!, 1)).get("ports")!;
    expect(text(field(field(ports, 22)[0]!, 1)[0]!)).toBe("array");
    const item = field(field(ports, 23)[0]!, 1)[0]!;
    expect(text(field(item, 1)[0]!)).toBe("#/definitions/io.k8s.api.core.v1.ContainerPort");
    const portExtensions = named(field(ports, 31));
    expect(JSON.parse(text(field(portExtensions.get("x-kubernetes-patch-merge-key")!, 2)[0]!))).toBe("containerPort");
    expect(JSON.parse(text(field(portExtensions.get("x-kubernetes-patch-strategy")!, 2)[0]!))).toBe("merge");
  });

  test("answers 304 to its ETag", async () => {
    const etag = (await get("/openapi/v2", "/openapi/v2", accept)).headers.get("etag")!;
    expect(etag).toBe(`"${openApiDocuments().v2Protobuf.hash}"`);
    expect((await get("/openapi/v2", "/openapi/v2", { ...accept, "If-None-Match": etag })).status).toBe(304);
  });

  test("is JSON for a client that prefers JSON (kubectl get --raw), and 406 for one that takes neither", async () => {
    const response = await get("/openapi/v2", "/openapi/v2", { Accept: "application/json, */*" });
    expect(response.headers.get("content-type")).toBe("application/json");
    const v2 = (await response.json()) as Schema;
    expect(v2.swagger).toBe("2.0");
    expect(v2.definitions["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"]).toEqual([{ group: "", kind: "Pod", version: "v1" }]);
    expect(v2.definitions["io.k8s.api.core.v1.Pod"].properties.spec).toEqual({
      $ref: "#/definitions/io.k8s.api.core.v1.PodSpec",
      description: schemas["io.k8s.api.core.v1.Pod"]!.properties.spec.description,
    });
    const quantity = v2.definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"];
    expect(quantity.type).toBe("string");
    const preferred = await get("/openapi/v2", "/openapi/v2", { Accept: "application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf" });
    expect(preferred.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    await expect(get("/openapi/v2", "/openapi/v2", { Accept: "text/html" })).rejects.toMatchObject({ code: 406, reason: "NotAcceptable" });
  });
});
