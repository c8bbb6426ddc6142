/**
 * The kubelet port's authentication and authorization in node mode, as the kubelet's webhook modes
 * do them (pkg/kubelet/server/auth.go, InstallAuthFilter): a client certificate the cluster's CA
 * signed names its user; else a bearer token is sent to the API server in a TokenReview; anyone
 * else (anonymous) is refused with 401. The user is then authorized by a SubjectAccessReview for
 * each of the request's subresources of `nodes/NAME` in turn (request-attributes.ts), and refused
 * with the kubelet's 403 when none is allowed. Answers are cached as the kubelet caches them.
 */
import { createHash } from "node:crypto";
import type { Clock } from "../../clock.ts";
import type { CertificateUser } from "../../api/http/certificate-user.ts";
import type { RequestGate } from "../../api/http/server.ts";
import type { ClusterApi } from "../../node/cluster-client.ts";
import { nodeRequestAttributes } from "./request-attributes.ts";
import { ReviewCache } from "./review-cache.ts";

/** The kubelet's defaults (KubeletConfiguration authentication.webhook.cacheTTL; authorization.webhook's two). */
export const TOKEN_REVIEW_TTL_MS = 2 * 60_000;
export const ALLOWED_TTL_MS = 5 * 60_000;
export const DENIED_TTL_MS = 30_000;
/** The kubelet's webhook timeouts are 10 s (TokenAccessReviewTimeout, SubjectAccessReview's client). */
const REVIEW_TIMEOUT_MS = 10_000;

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface KubeletAuthOptions {
  client: Pick<ClusterApi, "request">;
  nodeName: string;
  clock: Clock;
  log: (message: string) => void;
}

const TEXT = { "Content-Type": "text/plain; charset=utf-8" };

/** The API server's answer, cached: the user, or null for a token it did not authenticate. */
type TokenAnswer = UserInfo | null;

export class KubeletAuth {
  private readonly tokens: ReviewCache<TokenAnswer>;
  private readonly decisions: ReviewCache<boolean>;
  /** A review failed and was told: an unreachable API server is one line until it answers again. */
  private failing = false;
  /** Reviews asked and not yet answered, by cache key: requests that arrive together ask once. */
  private readonly asking = new Map<string, Promise<unknown>>();

  constructor(private readonly options: KubeletAuthOptions) {
    this.tokens = new ReviewCache(options.clock);
    this.decisions = new ReviewCache(options.clock);
  }

  /** The server's gate (server.ts): undefined serves the request, else the kubelet's refusal. */
  readonly gate: RequestGate = async (request, certificate) => {
    const user = certificate ? certificateUserInfo(certificate) : await this.authenticateToken(request.headers.get("authorization"));
    if (!user) return new Response("Unauthorized", { status: 401, headers: TEXT });
    const { verb, subresources } = nodeRequestAttributes(request.method, new URL(request.url).pathname);
    for (const subresource of subresources) {
      let allowed: boolean;
      try {
        allowed = await this.authorize(user, verb, subresource);
      } catch {
        return new Response(`Authorization error (user=${user.username}, verb=${verb}, resource=nodes, subresource=${subresource})`, { status: 500, headers: TEXT });
      }
      if (allowed) return undefined;
    }
    return new Response(`Forbidden (user=${user.username}, verb=${verb}, resource=nodes, subresource(s)=[${subresources.join(" ")}])\n`, { status: 403, headers: TEXT });
  };

  /**
   * The user a bearer token belongs to, from a TokenReview; undefined for no token, one the API
   * server did not authenticate, or a review that failed (the kubelet answers 401 to all three).
   */
  async authenticateToken(header: string | null): Promise<UserInfo | undefined> {
    // The bearer authenticator's reading: trimmed, the scheme in any case, the token the second part.
    const [scheme = "", token = ""] = (header ?? "").trim().split(" ", 2);
    if (scheme.toLowerCase() !== "bearer" || token === "") return undefined;
    const key = createHash("sha256").update(token).digest("hex");
    const cached = this.tokens.get(key);
    if (cached !== undefined) return cached ?? undefined;
    return this.once(`token ${key}`, () => this.reviewToken(key, token));
  }

  private async reviewToken(key: string, token: string): Promise<UserInfo | undefined> {
    let review: { status?: { authenticated?: boolean; user?: Partial<UserInfo> } };
    try {
      review = await this.options.client.request({
        method: "POST",
        path: "/apis/authentication.k8s.io/v1/tokenreviews",
        body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
        timeoutMs: REVIEW_TIMEOUT_MS,
      });
      this.answered();
    } catch (error) {
      this.failed(`create tokenreviews (authentication.k8s.io/v1)`, error);
      return undefined;
    }
    const user = review.status?.authenticated === true ? userInfo(review.status.user) : null;
    this.tokens.set(key, user, TOKEN_REVIEW_TTL_MS);
    return user ?? undefined;
  }

  /** Whether `user` may `verb` nodes/NAME/`subresource`; throws when the review cannot be had (not cached). */
  async authorize(user: UserInfo, verb: string, subresource: string): Promise<boolean> {
    const resourceAttributes = { namespace: "", verb, group: "", version: "v1", resource: "nodes", subresource, name: this.options.nodeName };
    const spec = { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, resourceAttributes };
    const key = JSON.stringify(spec);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    return this.once(`access ${key}`, () => this.reviewAccess(key, spec));
  }

  private async reviewAccess(key: string, spec: Record<string, unknown>): Promise<boolean> {
    let review: { status?: { allowed?: boolean } };
    try {
      review = await this.options.client.request({
        method: "POST",
        path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        body: { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec },
        timeoutMs: REVIEW_TIMEOUT_MS,
      });
      this.answered();
    } catch (error) {
      this.failed(`create subjectaccessreviews (authorization.k8s.io/v1)`, error);
      throw error;
    }
    const allowed = review.status?.allowed === true;
    this.decisions.set(key, allowed, allowed ? ALLOWED_TTL_MS : DENIED_TTL_MS);
    return allowed;
  }

  private once<T>(key: string, ask: () => Promise<T>): Promise<T> {
    const pending = this.asking.get(key) as Promise<T> | undefined;
    if (pending) return pending;
    const asked = ask().finally(() => this.asking.delete(key));
    this.asking.set(key, asked);
    return asked;
  }

  private failed(what: string, error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.options.log(`kubelet server: cannot ${what} at the API server: ${(error as Error)?.message ?? String(error)}; requests that need a review are refused until it answers`);
  }

  private answered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.options.log("kubelet server: the API server answers reviews again");
  }
}

/** The user a verified client certificate names (the x509 authenticator's CommonNameUserConversion). */
function certificateUserInfo(certificate: CertificateUser): UserInfo {
  return { username: certificate.name, groups: certificate.groups, extra: { "authentication.kubernetes.io/credential-id": [certificate.credentialId] } };
}

function userInfo(user: Partial<UserInfo> | undefined): UserInfo {
  return { username: user?.username ?? "", groups: user?.groups ?? [], ...(user?.uid && { uid: user.uid }), ...(user?.extra && { extra: user.extra }) };
}
