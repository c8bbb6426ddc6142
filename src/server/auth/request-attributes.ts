/**
 * What a request to the kubelet port asks, in the authorizer's terms (the kubelet's
 * nodeAuthorizerAttributesGetter, fine-grained authorization GA in 1.36): the verb from the HTTP
 * method, the resource `nodes` named for this node, and the subresources to try in order (the
 * first one allowed lets the request in). Pure.
 */

export interface NodeRequestAttributes {
  verb: string;
  /** `nodes/NAME/<subresource>`, tried in order: `[pods, proxy]` for /pods, `[proxy]` for exec. */
  subresources: string[];
}

/** Any other method (HEAD, OPTIONS) has the empty verb, which no RBAC rule allows, as in the kubelet. */
const VERBS: Record<string, string> = { POST: "create", GET: "get", PUT: "update", PATCH: "patch", DELETE: "delete" };

/** The fine-grained subresource tried before the coarse one, by path (the kubelet's first switch). */
const FINE_GRAINED: [string, string][] = [
  ["/allocatedPods", "pods"],
  ["/pods", "pods"],
  ["/healthz", "healthz"],
  ["/configz", "configz"],
  ["/runningpods", "pods"],
];

/** The coarse subresource (the kubelet's second switch); anything else is `proxy`. */
const COARSE: [string, string][] = [
  ["/stats", "stats"],
  ["/metrics", "metrics"],
  ["/logs", "log"],
  ["/checkpoint", "checkpoint"],
  ["/statusz", "statusz"],
  ["/flagz", "configz"],
];

export function nodeRequestAttributes(method: string, path: string): NodeRequestAttributes {
  const verb = VERBS[method] ?? "";
  const subresources: string[] = [];
  const fine = FINE_GRAINED.find(([prefix]) => isSubpath(path, prefix));
  if (fine) subresources.push(fine[1]);
  subresources.push(COARSE.find(([prefix]) => isSubpath(path, prefix))?.[1] ?? "proxy");
  return { verb, subresources };
}

/** `path` is `prefix` or below it (a whole segment: `/podsx` is not under `/pods`). */
function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path[prefix.length] === "/");
}
