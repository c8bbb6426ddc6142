/**
 * Writes in the API server's protobuf encoding, as client-go 1.33's typed clients send them
 * (kubectl 1.33's create namespace, auth can-i, auth whoami): the `k8s\0` envelope is read, its
 * object decoded by field number, and the write answered as its JSON twin would be.
 */
import { describe, expect, test } from "bun:test";
import { authReviewRoutes } from "../../src/api/resources/auth-reviews.ts";
import { namespaceRoutes } from "../../src/api/resources/namespaces/namespaces-api.ts";
import { podWriteRoutes } from "../../src/api/resources/pods/pods-write-routes.ts";
import { ProtoWriter } from "../../src/api/protobuf/writer.ts";
import { call } from "../api-objects-fixtures.ts";
import { namespacesAgent } from "../namespace-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

const PROTOBUF = "application/vnd.kubernetes.protobuf";

/** A runtime.Unknown envelope around `raw`, as client-go's protobuf serializer writes it. */
function envelope(apiVersion: string, kind: string, raw: (writer: ProtoWriter) => void): Uint8Array {
  const unknown = new ProtoWriter()
    .message(1, (typeMeta) => typeMeta.string(1, apiVersion).string(2, kind))
    .message(2, raw)
    .finish();
  return Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...unknown]);
}

/** ObjectMeta as gogo-protobuf writes it: every string field, empty or not, and labels as map entries. */
function objectMeta(writer: ProtoWriter, name: string, labels: Record<string, string> = {}): void {
  writer.string(1, name).string(2, "").string(3, "").string(5, "").string(6, "");
  for (const [key, value] of Object.entries(labels)) writer.message(11, (entry) => entry.string(1, key).string(2, value));
}

describe("protobuf request bodies", () => {
  test("a Namespace create (kubectl 1.33's create namespace) is read and stored like its JSON", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    const body = envelope("v1", "Namespace", (ns) => ns.message(1, (meta) => objectMeta(meta, "team-a", { tier: "dev" })).message(2, () => {}).message(3, (status) => status.string(1, "")));
    const created = await call(namespaceRoutes, "POST", "/api/v1/namespaces", a.api, { body, contentType: PROTOBUF, accept: `${PROTOBUF},application/json` });
    expect(created.status).toBe(201);
    expect(created.contentType).toBe("application/json");
    expect(created.body).toMatchObject({ kind: "Namespace", metadata: { name: "team-a", labels: { tier: "dev", "kubernetes.io/metadata.name": "team-a" } }, spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } });
    expect((await a.send("GET", "/api/v1/namespaces/team-a")).status).toBe(200);
    a.h.close();
  });

  test("the reviews (kubectl 1.33's auth can-i and whoami) are read as their JSON twins", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    const access = envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", (review) =>
      review.message(1, (meta) => objectMeta(meta, "")).message(2, (spec) => spec.message(1, (attributes) => attributes.string(1, "default").string(2, "create").string(3, "").string(4, "").string(5, "pods").string(6, "").string(7, ""))).message(3, (status) => status.number(1, false)),
    );
    const allowed = await call(authReviewRoutes, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", a.api, { body: access, contentType: PROTOBUF });
    expect(allowed).toMatchObject({ status: 201, body: { kind: "SelfSubjectAccessReview", spec: { resourceAttributes: { namespace: "default", verb: "create", resource: "pods" } }, status: { allowed: true } } });
    const neither = envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", (review) => review.message(2, () => {}));
    expect((await call(authReviewRoutes, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", a.api, { body: neither, contentType: PROTOBUF })).status).toBe(422);
    const rules = envelope("authorization.k8s.io/v1", "SelfSubjectRulesReview", (review) => review.message(2, (spec) => spec.string(1, "default")));
    expect((await call(authReviewRoutes, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", a.api, { body: rules, contentType: PROTOBUF })).status).toBe(201);
    const whoami = envelope("authentication.k8s.io/v1", "SelfSubjectReview", (review) => review.message(1, (meta) => objectMeta(meta, "")));
    const me = await call(authReviewRoutes, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", a.api, { body: whoami, contentType: PROTOBUF });
    expect(me.body.status.userInfo.username).toBe("minikubelet-admin");
    a.h.close();
  });

  test("a body without the envelope's magic is the decoder's 400; another kind than the route's is the API server's conversion 400", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    const bare = await call(namespaceRoutes, "POST", "/api/v1/namespaces", a.api, { body: new Uint8Array([1, 2, 3]), contentType: PROTOBUF });
    expect(bare).toMatchObject({ status: 400, body: { message: "the object provided is unrecognized (must be of type Namespace): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (010203)" } });
    const namespace = envelope("v1", "Namespace", (ns) => ns.message(1, (meta) => objectMeta(meta, "web")));
    const refused = await call(podWriteRoutes, "POST", "/api/v1/namespaces/default/pods", a.api, { body: namespace, contentType: PROTOBUF });
    expect(refused).toMatchObject({ status: 400, body: { reason: "BadRequest", message: 'Namespace in version "v1" cannot be handled as a Pod: converting (v1.Namespace) to (core.Pod): unknown conversion' } });
    a.h.close();
  });
});
