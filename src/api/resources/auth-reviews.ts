/**
 * The review APIs clients ask "who am I, what may I do" through, answered for the API's one user
 * (api-user.ts), who may do everything: authorization.k8s.io/v1 SelfSubjectAccessReview
 * (`kubectl auth can-i VERB RESOURCE` prints yes) and SelfSubjectRulesReview (`can-i --list`), and
 * authentication.k8s.io SelfSubjectReview (`kubectl auth whoami`: kubectl 1.27 asks v1beta1,
 * 1.28 and later v1). Each is a create (201) that stores nothing, validated as the API server
 * validates it.
 */
import { isPlainObject } from "../../manifest/fields.ts";
import { isoTime } from "../../v1/time.ts";
import { API_USER } from "../http/api-user.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { decodeBody } from "../http/request-body.ts";
import { ApiError, type StatusCause } from "../http/status.ts";

const AUTHORIZATION = "authorization.k8s.io";
const AUTHENTICATION = "authentication.k8s.io";

function created(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 201, headers: { "Content-Type": "application/json" } });
}

/** Every request of the API's user is allowed: system:masters is the API server's privileged group, allowed before any rule is read. */
async function selfSubjectAccessReview(request: ApiRequest): Promise<Response> {
  const review = await decodeBody(request, { apiVersion: `${AUTHORIZATION}/v1`, kind: "SelfSubjectAccessReview", internalPackage: "authorization" });
  const spec = isPlainObject(review.spec) ? review.spec : {};
  const causes = accessReviewCauses(spec);
  if (causes.length > 0) throw ApiError.invalid("SelfSubjectAccessReview", "", causes, AUTHORIZATION);
  // The privileged-group authorizer allows without a reason: status carries allowed alone.
  return created({ kind: review.kind, apiVersion: review.apiVersion, metadata: { creationTimestamp: null }, spec, status: { allowed: true } });
}

/** ValidateSelfSubjectAccessReviewSpec: exactly one of resourceAttributes and nonResourceAttributes. */
function accessReviewCauses(spec: Record<string, unknown>): StatusCause[] {
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  const causes: StatusCause[] = [];
  if (isPlainObject(resource) && isPlainObject(nonResource)) {
    const shown = `authorization.NonResourceAttributes{Path:${JSON.stringify(String(nonResource.path ?? ""))}, Verb:${JSON.stringify(String(nonResource.verb ?? ""))}}`;
    causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${shown}: cannot be specified in combination with resourceAttributes`, field: "spec.nonResourceAttributes" });
  }
  if (!isPlainObject(resource) && !isPlainObject(nonResource)) {
    causes.push({ reason: "FieldValueInvalid", message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified', field: "spec.resourceAttributes" });
  }
  return causes;
}

/** The rules of a user allowed everything: every verb on every resource of every group, and on every non-resource URL. */
async function selfSubjectRulesReview(request: ApiRequest): Promise<Response> {
  const review = await decodeBody(request, { apiVersion: `${AUTHORIZATION}/v1`, kind: "SelfSubjectRulesReview", internalPackage: "authorization" });
  const spec = isPlainObject(review.spec) ? review.spec : {};
  if (typeof spec.namespace !== "string" || spec.namespace === "") throw ApiError.badRequest("no namespace on request");
  return created({
    kind: review.kind,
    apiVersion: review.apiVersion,
    metadata: { creationTimestamp: null },
    spec: {},
    status: {
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      incomplete: false,
    },
  });
}

/** Who the request's user is: the API's one user, at the review's creation time. */
function selfSubjectReview(version: string): Route["handle"] {
  return async (request, api) => {
    const review = await decodeBody(request, { apiVersion: `${AUTHENTICATION}/${version}`, kind: "SelfSubjectReview", internalPackage: "authentication" });
    return created({
      kind: review.kind,
      apiVersion: review.apiVersion,
      metadata: { creationTimestamp: isoTime(Math.floor(api.clock.now() / 1000) * 1000) },
      status: { userInfo: { username: API_USER.username, groups: [...API_USER.groups] } },
    });
  };
}

export const authReviewRoutes: Route[] = [
  { method: "POST", path: `/apis/${AUTHORIZATION}/v1/selfsubjectaccessreviews`, handle: selfSubjectAccessReview },
  { method: "POST", path: `/apis/${AUTHORIZATION}/v1/selfsubjectrulesreviews`, handle: selfSubjectRulesReview },
  { method: "POST", path: `/apis/${AUTHENTICATION}/v1/selfsubjectreviews`, handle: selfSubjectReview("v1") },
  { method: "POST", path: `/apis/${AUTHENTICATION}/v1beta1/selfsubjectreviews`, handle: selfSubjectReview("v1beta1") },
];
