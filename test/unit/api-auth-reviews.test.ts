/**
 * The review APIs for the API's one user, an admin (system:masters): every access review allowed,
 * the rules review all wildcards, the self-subject review naming the user in v1 and v1beta1, bad
 * reviews refused in the API server's words, and all of it in discovery.
 */
import { describe, expect, test } from "bun:test";
import { API_USER } from "../../src/api/http/api-user.ts";
import { authReviewRoutes } from "../../src/api/resources/auth-reviews.ts";
import { discoveryRoutes } from "../../src/api/discovery/discovery.ts";
import { kubeconfigText } from "../../src/cli/kubeconfig.ts";
import { ensureCredentials, recordServerAddress } from "../../src/api/http/tls.ts";
import { apiContext, call } from "../api-objects-fixtures.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { parse } from "yaml";
import { join } from "node:path";

function reviews(dir: string) {
  const h = storeHarness(dir);
  const api = apiContext(h.dbPath, h.clock);
  const post = (path: string, body: unknown) => call(authReviewRoutes, "POST", path, api, { body: JSON.stringify(body) });
  return { h, api, post, [Symbol.dispose]: () => (api[Symbol.dispose](), h.agent.close()) };
}

describe("authorization.k8s.io/v1", () => {
  test("SelfSubjectAccessReview: 201, the spec echoed, allowed, for a resource or a non-resource URL", async () => {
    using dir = tempDir();
    using r = reviews(dir.path);
    const spec = { resourceAttributes: { namespace: "default", verb: "create", resource: "pods" } };
    const answer = await r.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", metadata: { creationTimestamp: null }, spec });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ kind: "SelfSubjectAccessReview", apiVersion: "authorization.k8s.io/v1", metadata: { creationTimestamp: null }, spec, status: { allowed: true } });
    const url = await r.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { spec: { nonResourceAttributes: { path: "/logs", verb: "get" } } });
    expect(url.body.status).toEqual({ allowed: true });
  });

  test("a review asking nothing, or both things, is the API server's 422 with its cause", async () => {
    using dir = tempDir();
    using r = reviews(dir.path);
    const empty = await r.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { spec: {} });
    expect(empty).toMatchObject({
      status: 422,
      body: {
        reason: "Invalid",
        message: 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        details: { group: "authorization.k8s.io", kind: "SelfSubjectAccessReview", causes: [{ reason: "FieldValueInvalid", field: "spec.resourceAttributes" }] },
      },
    });
    const both = await r.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { spec: { resourceAttributes: { verb: "get" }, nonResourceAttributes: { path: "/x", verb: "get" } } });
    expect(both.body.message).toBe(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes',
    );
    const wrongKind = await r.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: {} });
    expect(wrongKind).toMatchObject({ status: 400, body: { message: 'SubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: converting (v1.SubjectAccessReview) to (authorization.SelfSubjectAccessReview): unknown conversion' } });
  });

  test("SelfSubjectRulesReview: every verb on everything; a review without a namespace is the API server's 400", async () => {
    using dir = tempDir();
    using r = reviews(dir.path);
    const rules = await r.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace: "default" } });
    expect(rules.status).toBe(201);
    expect(rules.body).toEqual({
      kind: "SelfSubjectRulesReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec: {},
      status: { resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }], incomplete: false },
    });
    expect(await r.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", { spec: {} })).toMatchObject({ status: 400, body: { reason: "BadRequest", message: "no namespace on request" } });
  });
});

describe("authentication.k8s.io", () => {
  test("SelfSubjectReview names the API's user and its groups, in v1 and in v1beta1 (kubectl 1.27's whoami)", async () => {
    using dir = tempDir();
    using r = reviews(dir.path);
    for (const version of ["v1", "v1beta1"]) {
      const answer = await r.post(`/apis/authentication.k8s.io/${version}/selfsubjectreviews`, { apiVersion: `authentication.k8s.io/${version}`, kind: "SelfSubjectReview", metadata: { creationTimestamp: null }, status: { userInfo: {} } });
      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({ kind: "SelfSubjectReview", apiVersion: `authentication.k8s.io/${version}`, status: { userInfo: { username: "minikubelet-admin", groups: ["system:masters", "system:authenticated"] } } });
      expect(answer.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
  });

  test("the kubeconfig names the same user", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "state.db");
    ensureCredentials(dbPath);
    recordServerAddress(dbPath, "https://127.0.0.1:6443");
    const config = parse(kubeconfigText(dbPath));
    expect(config.users.map((user: { name: string }) => user.name)).toEqual([API_USER.username]);
    expect(config.contexts[0].context.user).toBe(API_USER.username);
  });
});

test("discovery lists both groups, their versions and reviews, create only", async () => {
  const get = (path: string, params: Record<string, string> = {}) => {
    const route = discoveryRoutes.find((candidate) => candidate.path === path)!;
    const url = new URL(`https://127.0.0.1:6443${path}`);
    return Promise.resolve(route.handle({ method: "GET", url, headers: new Headers({ Accept: "application/json" }), params, query: url.searchParams } as never, undefined as never)).then((response) => response.json() as Promise<any>);
  };
  const groups = await get("/apis");
  expect(groups.groups.map((group: any) => [group.name, group.versions.map((v: any) => v.version), group.preferredVersion.version])).toEqual([
    ["authentication.k8s.io", ["v1", "v1beta1"], "v1"],
    ["authorization.k8s.io", ["v1"], "v1"],
    ["metrics.k8s.io", ["v1beta1"], "v1beta1"],
  ]);
  const authorization = await get("/apis/:group/:version", { group: "authorization.k8s.io", version: "v1" });
  expect(authorization).toMatchObject({ kind: "APIResourceList", groupVersion: "authorization.k8s.io/v1" });
  expect(authorization.resources.map((resource: any) => [resource.name, resource.kind, resource.namespaced, resource.verbs])).toEqual([
    ["selfsubjectaccessreviews", "SelfSubjectAccessReview", false, ["create"]],
    ["selfsubjectrulesreviews", "SelfSubjectRulesReview", false, ["create"]],
  ]);
  expect(await get("/apis/:group", { group: "authentication.k8s.io" })).toMatchObject({ kind: "APIGroup", name: "authentication.k8s.io", preferredVersion: { groupVersion: "authentication.k8s.io/v1" } });
  const aggregated = await (await discoveryRoutes.find((candidate) => candidate.path === "/apis")!.handle(
    { method: "GET", url: new URL("https://127.0.0.1/apis"), headers: new Headers({ Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" }), params: {}, query: new URLSearchParams() } as never,
    undefined as never,
  )).json() as any;
  expect(aggregated.items.map((item: any) => item.metadata.name)).toEqual(["authentication.k8s.io", "authorization.k8s.io", "metrics.k8s.io"]);
  expect(aggregated.items[1].versions[0].resources[0]).toMatchObject({ resource: "selfsubjectaccessreviews", responseKind: { group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectAccessReview" }, scope: "Cluster", verbs: ["create"] });
});
