/**
 * Who may call the agent's API, decided before routing. The bearer token of the kubeconfig
 * (`minikubelet kubeconfig`) is the cluster admin, allowed everything. A ServiceAccount token the
 * agent signed (service-account-tokens.ts) is its ServiceAccount while that account (same uid)
 * and the pod it is bound to still exist, and it may do what this agent grants every
 * ServiceAccount until RBAC is served: read its own namespace (Secrets excepted), discovery and
 * the OpenAPI documents, and its own access reviews, as the API server's system:discovery and
 * system:basic-user roles allow. Anything else is RBAC's 403 in its words. No header at all is an
 * anonymous request, which may read the public paths; any other token is 401.
 */
import { timingSafeEqual } from "node:crypto";
import { liveObject, podExists } from "../../store/object-reads.ts";
import type { StoreReader } from "../../store/queries.ts";
import { queryFlag } from "./query-flags.ts";
import { serviceAccountUser, type TokenAuthority, type VerifiedToken } from "./service-account-tokens.ts";
import { ApiError, statusResponse } from "./status.ts";

export interface ApiGateOptions {
  adminToken: string;
  publicPaths: ReadonlySet<string>;
  /** Under `run`: ServiceAccount tokens are checked too. */
  tokens?: TokenAuthority;
  store: StoreReader;
}

/** The gate startApiServer runs on each request: undefined to serve it, else the refusal. */
export function apiGate(options: ApiGateOptions): (request: Request) => Promise<Response | undefined> {
  const admin = Buffer.from(options.adminToken);
  return async (request) => {
    const header = request.headers.get("authorization");
    const url = new URL(request.url);
    if (header === null && request.method === "GET" && options.publicPaths.has(url.pathname)) return undefined;
    const [scheme = "", token = ""] = (header ?? "").trim().split(" ", 2);
    if (scheme.toLowerCase() !== "bearer") return unauthorized();
    const given = Buffer.from(token);
    if (given.length === admin.length && timingSafeEqual(given, admin)) return undefined;
    const subject = options.tokens && token.includes(".") ? await options.tokens.verify(token) : undefined;
    if (!subject || !stillValid(options.store, subject)) return unauthorized();
    return authorize(subject, request.method, url);
  };
}

function unauthorized(): Response {
  return statusResponse(new ApiError(401, "Unauthorized", "Unauthorized"), { "WWW-Authenticate": 'Bearer realm="minikubelet"' });
}

/** The API server's check of a bound token: its ServiceAccount (the same uid) and its pod are still there. */
function stillValid(store: StoreReader, subject: VerifiedToken): boolean {
  const account = liveObject(store.db, "serviceaccounts", subject.namespace, subject.serviceAccount.name);
  if (account?.uid !== subject.serviceAccount.uid) return false;
  return !subject.pod || podExists(store.db, subject.namespace, subject.pod.name, subject.pod.uid);
}

/** Paths every authenticated user may GET (system:discovery, system:public-info-viewer). */
const DISCOVERY = /^\/(api|api\/v1|apis|apis\/[^/]+|apis\/[^/]+\/[^/]+|version|healthz|livez|readyz|openapi\/v2|openapi\/v3(\/.*)?)\/?$/;
/** The reviews every authenticated user may create about itself (system:basic-user). */
const SELF_REVIEWS = /^\/apis\/(authorization\.k8s\.io\/v1\/selfsubject(access|rules)reviews|authentication\.k8s\.io\/v1(beta1)?\/selfsubjectreviews)$/;

interface RequestAttributes {
  verb: string;
  group: string;
  /** `pods`, or `pods/log` for a subresource. */
  resource: string;
  /** The object named, if any. */
  name: string;
  namespace?: string;
}

/** What a resource request asks, read off its path and method as the API server's RequestInfoFactory does. */
function attributes(method: string, url: URL): RequestAttributes {
  let parts = url.pathname.split("/").filter(Boolean);
  let group = "";
  if (parts[0] === "api") parts = parts.slice(2);
  else if (parts[0] === "apis") {
    group = parts[1] ?? "";
    parts = parts.slice(3);
  }
  const watchPath = parts[0] === "watch";
  if (watchPath) parts = parts.slice(1);
  let namespace: string | undefined;
  if (parts[0] === "namespaces" && parts.length >= 3) {
    namespace = parts[1];
    parts = parts.slice(2);
  } else if (parts[0] === "namespaces" && parts.length === 2) {
    namespace = parts[1];
  }
  const resource = parts[0] ?? "";
  const named = parts.length >= 2 || (resource === "namespaces" && namespace !== undefined);
  const verbs: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch", DELETE: named ? "delete" : "deletecollection" };
  let verb = verbs[method] ?? (named ? "get" : "list");
  if (method === "GET" && (watchPath || queryFlag(url.searchParams, "watch") === true)) verb = "watch";
  const name = resource === "namespaces" && parts.length === 1 ? (namespace ?? "") : (parts[1] ?? "");
  return { verb, group, resource: parts[1] && parts.length >= 3 ? `${resource}/${parts[2]}` : resource, name, ...(namespace !== undefined && { namespace }) };
}

function authorize(subject: VerifiedToken, method: string, url: URL): Response | undefined {
  if (method === "GET" && DISCOVERY.test(url.pathname)) return undefined;
  if (method === "POST" && SELF_REVIEWS.test(url.pathname)) return undefined;
  const asked = attributes(method, url);
  const reads = asked.verb === "get" || asked.verb === "list" || asked.verb === "watch";
  if (reads && asked.namespace === subject.namespace && asked.resource.split("/")[0] !== "secrets") return undefined;
  const user = serviceAccountUser(subject).username;
  const scope = asked.namespace === undefined ? "at the cluster scope" : `in the namespace "${asked.namespace}"`;
  const resource = asked.resource.split("/")[0]!;
  // RBAC's denial, as the API server's NewForbidden words it (the object's name when one is named).
  const reason = `User "${user}" cannot ${asked.verb} resource "${asked.resource}" in API group "${asked.group}" ${scope}`;
  return statusResponse(ApiError.forbidden(resource || url.pathname, asked.name, reason, asked.group));
}
