/**
 * The kubelet port's gate in node mode (src/server/auth): who is let in, on what attributes, in
 * the kubelet's words, and how long the cluster's answers are kept. A fake cluster answers the
 * TokenReviews and SubjectAccessReviews from tables and counts them; the clock is stepped.
 */
import { describe, expect, test } from "bun:test";
import type { CertificateUser } from "../../src/api/http/certificate-user.ts";
import type { ClusterRequest } from "../../src/node/cluster-client.ts";
import { ALLOWED_TTL_MS, DENIED_TTL_MS, KubeletAuth, TOKEN_REVIEW_TTL_MS } from "../../src/server/auth/kubelet-auth.ts";
import { nodeRequestAttributes } from "../../src/server/auth/request-attributes.ts";
import { FakeClock } from "../fake-clock.ts";

const NODE = "n1";
const APISERVER: CertificateUser = { name: "kube-apiserver-kubelet-client", groups: ["system:masters"], credentialId: "X509SHA256=ab12" };

/** A cluster whose tokens and grants are tables; `down` makes every review fail as an unreachable API server does. */
class FakeCluster {
  readonly tokens = new Map<string, { username: string; groups: string[] }>();
  /** `user verb subresource` allowed. */
  readonly grants = new Set<string>();
  readonly sent: ClusterRequest[] = [];
  down = false;

  async request<T>(request: ClusterRequest): Promise<T> {
    this.sent.push(request);
    if (this.down) throw new Error("connect ECONNREFUSED 127.0.0.1:6443");
    const body = request.body as { spec: Record<string, any> };
    if (request.path.endsWith("/tokenreviews")) {
      const user = this.tokens.get(body.spec.token);
      return { status: user ? { authenticated: true, user } : { authenticated: false } } as T;
    }
    const { user, resourceAttributes: attributes } = body.spec;
    return { status: { allowed: this.grants.has(`${user} ${attributes.verb} ${attributes.subresource}`) } } as T;
  }

  count(kind: "tokenreviews" | "subjectaccessreviews"): number {
    return this.sent.filter((request) => request.path.endsWith(`/${kind}`)).length;
  }
}

function harness() {
  const cluster = new FakeCluster();
  const clock = new FakeClock();
  const lines: string[] = [];
  const auth = new KubeletAuth({ client: cluster, nodeName: NODE, clock, log: (line) => lines.push(line) });
  const ask = async (path: string, as: { certificate?: CertificateUser; token?: string; method?: string } = {}) => {
    const request = new Request(`https://127.0.0.1:10250${path}`, { method: as.method ?? "GET", headers: as.token ? { Authorization: `Bearer ${as.token}` } : {} });
    const refused = await auth.gate(request, as.certificate);
    return refused ? { status: refused.status, text: await refused.text() } : { status: 200, text: "" };
  };
  return { cluster, clock, lines, ask };
}

describe("the request's attributes, as the kubelet's nodeAuthorizerAttributesGetter draws them", () => {
  const cases: [method: string, path: string, verb: string, subresources: string[]][] = [
    ["GET", "/containerLogs/default/web/app", "get", ["proxy"]],
    ["POST", "/exec/default/web/app", "create", ["proxy"]],
    ["GET", "/exec/default/web/app", "get", ["proxy"]],
    ["POST", "/portForward/default/web", "create", ["proxy"]],
    ["GET", "/pods", "get", ["pods", "proxy"]],
    ["GET", "/podsx", "get", ["proxy"]],
    ["GET", "/runningpods/", "get", ["pods", "proxy"]],
    ["GET", "/healthz/syncloop", "get", ["healthz", "proxy"]],
    ["GET", "/configz", "get", ["configz", "proxy"]],
    ["GET", "/stats/summary", "get", ["stats"]],
    ["GET", "/metrics", "get", ["metrics"]],
    ["GET", "/metrics/resource", "get", ["metrics"]],
    ["GET", "/logs/syslog", "get", ["log"]],
    ["HEAD", "/pods", "", ["pods", "proxy"]],
  ];
  for (const [method, path, verb, subresources] of cases) {
    test(`${method} ${path}: verb ${JSON.stringify(verb)}, nodes/${subresources.join(", nodes/")}`, () => {
      expect(nodeRequestAttributes(method, path)).toEqual({ verb, subresources });
    });
  }
});

describe("KubeletAuth", () => {
  test("a verified client certificate is its CN and O; the review asks for nodes/NAME/proxy with the credential id", async () => {
    const h = harness();
    h.cluster.grants.add(`${APISERVER.name} create proxy`);
    expect(await h.ask("/exec/default/web/app", { certificate: APISERVER, method: "POST" })).toEqual({ status: 200, text: "" });
    expect(h.cluster.count("tokenreviews")).toBe(0);
    const review = h.cluster.sent[0]!;
    expect(review.path).toBe("/apis/authorization.k8s.io/v1/subjectaccessreviews");
    expect((review.body as { spec: unknown }).spec).toEqual({
      user: APISERVER.name,
      groups: ["system:masters"],
      extra: { "authentication.kubernetes.io/credential-id": ["X509SHA256=ab12"] },
      resourceAttributes: { namespace: "", verb: "create", group: "", version: "v1", resource: "nodes", subresource: "proxy", name: NODE },
    });
  });

  test("no identity, a token that is not a bearer one, or one the cluster does not authenticate: the kubelet's 401", async () => {
    const h = harness();
    expect(await h.ask("/pods")).toEqual({ status: 401, text: "Unauthorized" });
    expect(h.cluster.sent).toEqual([]);
    expect(await h.ask("/pods", { token: "unknown" })).toEqual({ status: 401, text: "Unauthorized" });
    expect(h.cluster.count("tokenreviews")).toBe(1);
    expect(h.cluster.count("subjectaccessreviews")).toBe(0);
  });

  test("a user authorized on no subresource: the kubelet's 403 naming the user, the verb and every subresource tried", async () => {
    const h = harness();
    h.cluster.tokens.set("sa", { username: "system:serviceaccount:default:sa", groups: ["system:serviceaccounts"] });
    expect(await h.ask("/pods", { token: "sa" })).toEqual({ status: 403, text: "Forbidden (user=system:serviceaccount:default:sa, verb=get, resource=nodes, subresource(s)=[pods proxy])\n" });
    expect(h.cluster.count("subjectaccessreviews")).toBe(2);
  });

  test("the coarse subresource lets in what the fine-grained one does not (nodes/proxy covers /pods)", async () => {
    const h = harness();
    h.cluster.tokens.set("t", { username: "ops", groups: [] });
    h.cluster.grants.add("ops get proxy");
    expect((await h.ask("/pods", { token: "t" })).status).toBe(200);
  });

  test("a token's review is kept 2 minutes, whatever its answer", async () => {
    const h = harness();
    h.cluster.tokens.set("good", { username: "ops", groups: [] });
    h.cluster.grants.add("ops get stats");
    await h.ask("/stats/summary", { token: "good" });
    await h.ask("/stats/summary", { token: "bad" });
    h.clock.step(TOKEN_REVIEW_TTL_MS - 1);
    await h.ask("/stats/summary", { token: "good" });
    await h.ask("/stats/summary", { token: "bad" });
    expect(h.cluster.count("tokenreviews")).toBe(2);
    h.clock.step(1);
    expect((await h.ask("/stats/summary", { token: "good" })).status).toBe(200);
    expect((await h.ask("/stats/summary", { token: "bad" })).status).toBe(401);
    expect(h.cluster.count("tokenreviews")).toBe(4);
  });

  test("requests that arrive together share one TokenReview and one SubjectAccessReview", async () => {
    const h = harness();
    h.cluster.tokens.set("t", { username: "ops", groups: [] });
    h.cluster.grants.add("ops get stats");
    const answers = await Promise.all([1, 2, 3].map(() => h.ask("/stats/summary", { token: "t" })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect([h.cluster.count("tokenreviews"), h.cluster.count("subjectaccessreviews")]).toEqual([1, 1]);
  });

  test("an allowed decision is kept 5 minutes, a denied one 30 seconds", async () => {
    const h = harness();
    h.cluster.grants.add(`${APISERVER.name} get stats`);
    const decisions = () => h.cluster.count("subjectaccessreviews");
    await h.ask("/stats/summary", { certificate: APISERVER });
    await h.ask("/metrics", { certificate: APISERVER });
    expect(decisions()).toBe(2);
    // Granted meanwhile: the denial stands until its 30 s are over.
    h.cluster.grants.add(`${APISERVER.name} get metrics`);
    h.clock.step(DENIED_TTL_MS - 1);
    expect((await h.ask("/metrics", { certificate: APISERVER })).status).toBe(403);
    h.clock.step(1);
    expect((await h.ask("/metrics", { certificate: APISERVER })).status).toBe(200);
    expect(decisions()).toBe(3);
    // Revoked meanwhile: the grant stands for its 5 minutes.
    h.cluster.grants.clear();
    h.clock.step(ALLOWED_TTL_MS - DENIED_TTL_MS - 1);
    expect((await h.ask("/stats/summary", { certificate: APISERVER })).status).toBe(200);
    h.clock.step(DENIED_TTL_MS + 1);
    expect((await h.ask("/stats/summary", { certificate: APISERVER })).status).toBe(403);
    expect(decisions()).toBe(4);
  });

  test("an API server that cannot be reached: 500 Authorization error (401 for a token), one line until it answers again, nothing cached", async () => {
    const h = harness();
    h.cluster.tokens.set("t", { username: "ops", groups: [] });
    h.cluster.grants.add(`${APISERVER.name} get proxy`);
    h.cluster.down = true;
    expect(await h.ask("/containerLogs/default/web/app", { certificate: APISERVER })).toEqual({ status: 500, text: `Authorization error (user=${APISERVER.name}, verb=get, resource=nodes, subresource=proxy)` });
    expect((await h.ask("/containerLogs/default/web/app", { token: "t" })).status).toBe(401);
    await h.ask("/containerLogs/default/web/app", { certificate: APISERVER });
    expect(h.lines).toHaveLength(1);
    expect(h.lines[0]).toContain("cannot create subjectaccessreviews (authorization.k8s.io/v1) at the API server: connect ECONNREFUSED");
    h.cluster.down = false;
    expect((await h.ask("/containerLogs/default/web/app", { certificate: APISERVER })).status).toBe(200);
    expect(h.lines).toEqual([h.lines[0]!, "kubelet server: the API server answers reviews again"]);
  });
});
