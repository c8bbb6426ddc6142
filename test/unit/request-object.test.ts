/**
 * decodeRequestObject: a write's body by its Content-Type, with the API server's refusals; the
 * protobuf path's handling of what kubectl's own bytes (protobuf-bodies.test.ts) do not carry:
 * unknown field numbers, FieldsV1, ExtraValue, an int IntOrString, int64s. And the pod routes
 * taking kubectl 1.33's bytes, which answered 400 `the request body is not a JSON object` before.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import type { ApiRequest } from "../../src/api/http/http.ts";
import { createPod } from "../../src/api/resources/pods/pods-create.ts";
import { deletePod } from "../../src/api/resources/pods/pods-delete.ts";
import { envelopeType, objectType } from "../../src/api/protobuf/schema.ts";
import { decodeRequestObject } from "../../src/api/http/request-object.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import { apiHarness } from "../api-watch-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

const PROTOBUF = "application/vnd.kubernetes.protobuf";
const FIXTURES = join(import.meta.dir, "../fixtures/kubectl-bodies");

/** `object` encoded as client-go does: "k8s\0", then a runtime.Unknown around the message. */
function encode(apiVersion: string, kind: string, object: Record<string, unknown>, extra?: (writer: protobuf.Writer) => void): Uint8Array {
  const type = objectType(apiVersion, kind)!;
  const writer = type.encode(type.fromObject(object));
  extra?.(writer);
  const raw = writer.finish();
  const unknown = envelopeType().encode(envelopeType().fromObject({ typeMeta: { apiVersion, kind }, raw })).finish();
  return Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...unknown]);
}

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("decoded");
}

describe("decodeRequestObject by Content-Type", () => {
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" } };

  test("JSON (also with no Content-Type or a charset), YAML and protobuf give the same object", () => {
    const text = new TextEncoder().encode(JSON.stringify(pod));
    expect(decodeRequestObject(text, "application/json", "Pod")).toEqual(pod);
    expect(decodeRequestObject(text, null, "Pod")).toEqual(pod);
    expect(decodeRequestObject(text, "application/json; charset=utf-8", "Pod")).toEqual(pod);
    expect(decodeRequestObject(new TextEncoder().encode("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"), "application/yaml", "Pod")).toEqual(pod);
    expect(decodeRequestObject(encode("v1", "Pod", { metadata: { name: "web" } }), PROTOBUF, "Pod")).toMatchObject(pod);
  });

  test("another Content-Type is the API server's 415, naming what it takes", () => {
    const error = refusal(() => decodeRequestObject(new Uint8Array(), "text/plain", "Pod"));
    expect(error.code).toBe(415);
    expect(error.reason).toBe("UnsupportedMediaType");
    expect(error.message).toBe("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf");
  });

  test("a body that is not protobuf is the decoder's 400, with the body summarized as the API server does", () => {
    const cases: [Uint8Array, string][] = [
      [new Uint8Array(), "the object provided is unrecognized (must be of type Pod): empty data (<empty>)"],
      [new TextEncoder().encode("{}"), "the object provided is unrecognized (must be of type Pod): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({})"],
      [Uint8Array.of(0x6b, 0x38, 0x73, 0x00), "the object provided is unrecognized (must be of type Pod): empty body (6b387300)"],
      [Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x0a, 0x09, 0x0a), "the object provided is unrecognized (must be of type Pod): unexpected EOF (6b3873000a090a)"],
      [Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x0f), "the object provided is unrecognized (must be of type Pod): proto: illegal wireType 7 (6b3873000f)"],
    ];
    for (const [body, message] of cases) {
      const error = refusal(() => decodeRequestObject(body, PROTOBUF, "Pod"));
      expect({ code: error.code, message: error.message }).toEqual({ code: 400, message });
    }
  });

  test("an envelope naming a kind we do not hold, or whose object is cut short, names that kind", () => {
    const rewritten = envelopeType().encode(envelopeType().fromObject({ typeMeta: { apiVersion: "v1", kind: "Service" }, raw: new Uint8Array() })).finish();
    expect(refusal(() => decodeRequestObject(Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...rewritten]), PROTOBUF, "Pod")).message).toBe(
      'Service in version "v1" cannot be handled as a Pod: no kind "Service" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    );
    const cut = envelopeType().encode(envelopeType().fromObject({ typeMeta: { apiVersion: "v1", kind: "Pod" }, raw: Uint8Array.of(0x0a, 0x05, 0x0a) })).finish();
    expect(refusal(() => decodeRequestObject(Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...cut]), PROTOBUF, "Pod")).message).toBe('Pod in version "v1" cannot be handled as a Pod: unexpected EOF');
  });

  test("every kind kubectl 1.33 sends, from its own bytes, with its Content-Type", () => {
    for (const name of ["debug-node.1", "create-namespace.1", "auth-can-i.1", "auth-can-i-list.1", "auth-whoami.1", "debug-copy-replace.2"]) {
      const { contentType } = JSON.parse(readFileSync(join(FIXTURES, `1.33/${name}.json`), "utf8"));
      const decoded = decodeRequestObject(new Uint8Array(readFileSync(join(FIXTURES, `1.33/${name}.bin`))), contentType, "Pod") as { kind: string };
      expect(decoded.kind).toMatch(/^(Pod|Namespace|SelfSubjectAccessReview|SelfSubjectRulesReview|SelfSubjectReview|DeleteOptions)$/);
    }
  });
});

describe("protobuf shapes kubectl does not send", () => {
  test("an unknown field number is dropped, as the API server's unmarshalers skip it", () => {
    const body = encode("v1", "Pod", { metadata: { name: "web" }, spec: { containers: [{ name: "app", image: "busybox" }] } }, (writer) => {
      writer.uint32((99 << 3) | 2).string("from a newer client");
      writer.uint32((98 << 3) | 0).uint32(7);
    });
    expect(decodeRequestObject(body, PROTOBUF, "Pod")).toEqual({
      kind: "Pod",
      apiVersion: "v1",
      metadata: { name: "web", creationTimestamp: null },
      spec: { containers: [{ name: "app", image: "busybox", resources: {} }] },
      status: {},
    });
  });

  test("Time, FieldsV1, an int IntOrString, int64s and a preconditioned DeleteOptions", () => {
    const managed = { manager: "kubectl", operation: "Update", time: { seconds: 1_700_000_000, nanos: 5 }, fieldsType: "FieldsV1", fieldsV1: { Raw: new TextEncoder().encode('{"f:spec":{}}') } };
    const pod = decodeRequestObject(
      encode("v1", "Pod", {
        metadata: { name: "web", creationTimestamp: { seconds: 1_700_000_001 }, deletionGracePeriodSeconds: 30, managedFields: [managed] },
        spec: { containers: [{ name: "app", livenessProbe: { handler: { tcpSocket: { port: { type: 0, intVal: 8080 } } } } }], activeDeadlineSeconds: 5_000_000_000 },
      }),
      PROTOBUF,
      "Pod",
    ) as any;
    expect(pod.metadata).toEqual({
      name: "web",
      creationTimestamp: "2023-11-14T22:13:21Z",
      deletionGracePeriodSeconds: 30,
      managedFields: [{ manager: "kubectl", operation: "Update", time: "2023-11-14T22:13:20Z", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } }],
    });
    expect(pod.spec.containers[0].livenessProbe).toEqual({ tcpSocket: { port: 8080 } });
    expect(pod.spec.activeDeadlineSeconds).toBe(5_000_000_000);
    expect(decodeRequestObject(encode("v1", "DeleteOptions", { gracePeriodSeconds: 10, preconditions: { uid: "u-1", resourceVersion: "7" }, dryRun: ["All"] }), PROTOBUF, "DeleteOptions")).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      gracePeriodSeconds: 10,
      preconditions: { uid: "u-1", resourceVersion: "7" },
      dryRun: ["All"],
    });
  });

  test("a SelfSubjectReview's extra values are lists; a review's rules print null when absent", () => {
    const review = encode("authentication.k8s.io/v1", "SelfSubjectReview", { status: { userInfo: { username: "admin", groups: ["system:masters"], extra: { scopes: { items: ["a", "b"] } } } } });
    expect((decodeRequestObject(review, PROTOBUF, "SelfSubjectReview") as any).status).toEqual({ userInfo: { username: "admin", groups: ["system:masters"], extra: { scopes: ["a", "b"] } } });
    const rules = encode("authorization.k8s.io/v1", "SelfSubjectRulesReview", { spec: { namespace: "default" } });
    expect((decodeRequestObject(rules, PROTOBUF, "SelfSubjectRulesReview") as any).status).toEqual({ resourceRules: null, nonResourceRules: null, incomplete: false });
  });
});

describe("the pod routes take kubectl 1.33's protobuf", () => {
  function request(method: string, path: string, params: Record<string, string>, body: Uint8Array): ApiRequest {
    const url = new URL(path, "http://127.0.0.1");
    return { method, url, headers: new Headers({ "Content-Type": PROTOBUF }), params, query: url.searchParams, signal: new AbortController().signal, body: async () => body, upgrade: () => undefined };
  }

  test("kubectl debug node/NAME's pod is created; kubectl debug --replace's DeleteOptions deletes at once", async () => {
    using dir = tempDir();
    const h = apiHarness(dir.path);
    const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
    const api = { ...h.api, podWrites: sources.writes };
    const body = new Uint8Array(readFileSync(join(FIXTURES, "1.33/debug-node.1.bin")));
    const created = await createPod(request("POST", "/api/v1/namespaces/default/pods", { namespace: "default" }, body), api);
    expect(created.status).toBe(201);
    const served = (await created.json()) as any;
    expect(served.metadata.name).toMatch(/^node-debugger-lab-[a-z0-9]{5}$/);
    // The ServiceAccount admission runs it as `default`, with the token volume beside the host's root.
    expect(served.spec).toMatchObject({
      hostPID: true,
      hostNetwork: true,
      hostIPC: true,
      nodeName: "lab",
      serviceAccountName: "default",
      volumes: [{ name: "host-root", hostPath: { path: "/" } }, { name: expect.stringMatching(/^kube-api-access-[b-z2-9]{5}$/) }],
    });
    const options = new Uint8Array(readFileSync(join(FIXTURES, "1.33/debug-copy-replace.2.bin")));
    const name = served.metadata.name;
    const deleted = await deletePod(request("DELETE", `/api/v1/namespaces/default/pods/${name}`, { namespace: "default", name }, options), api);
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as any).metadata.deletionGracePeriodSeconds).toBe(0);
    h.close();
  });
});

describe("a body nested too deep", () => {
  const outcome = (text: string, contentType: string) => {
    try {
      decodeRequestObject(new TextEncoder().encode(text), contentType, "Pod");
    } catch (error) {
      return error instanceof ApiError ? { code: error.code, message: error.message } : { thrown: String(error) };
    }
    return { accepted: true };
  };

  test("JSON past 10,000 levels is the decoder's 400; 10,000 levels decode", () => {
    const deep = (depth: number) => `{"kind":"Pod","x":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
    expect(outcome(deep(10_001), "application/json")).toEqual({
      code: 400,
      message: `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: invalid character '[' exceeded max depth (${deep(10_001).slice(0, 30)} ...)`,
    });
    expect(outcome(deep(10_000), "application/json")).toEqual({ accepted: true });
    // Escaped quotes do not end a string: its brackets stay text.
    expect(outcome(`{"kind":"Pod","x":"\\"${"[".repeat(20_000)}"}`, "application/json")).toEqual({ accepted: true });
  });

  test("YAML deeper than the parser's stack is a 400, not a thrown RangeError (a 500)", () => {
    const answer = outcome(`apiVersion: v1\nkind: Pod\nx: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`, "application/yaml");
    expect(answer).toMatchObject({ code: 400 });
    expect((answer as { message: string }).message).toContain("exceeded max depth of 1000");
  });
});
