/**
 * POST serviceaccounts/NAME/token: a TokenRequest (`kubectl create token NAME`), answered as the
 * API server's token REST storage answers it: the ServiceAccount must exist, a bound Pod must
 * exist with the uid given, the expiry is at least ten minutes (an hour when not asked), and the
 * token names the ServiceAccount and the pod (service-account-tokens.ts). The loop asks the same
 * for a pod's projected token (issueBoundToken), without HTTP.
 */
import type { Database } from "bun:sqlite";
import { isPlainObject } from "../../../manifest/fields.ts";
import { liveObject, podUid } from "../../../store/object-reads.ts";
import { isoTime } from "../../../v1/time.ts";
import type { ApiContext } from "../../http/context.ts";
import type { ApiRequest, Route } from "../../http/http.ts";
import { decodeBody } from "../../http/request-body.ts";
import { DEFAULT_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS, type Issued, type TokenAuthority } from "../../http/service-account-tokens.ts";
import { ApiError } from "../../http/status.ts";

type Json = Record<string, unknown>;

/** What a token is asked for: the ServiceAccount, the pod it is bound to (if any), audiences and expiry. */
export interface BoundTokenRequest {
  namespace: string;
  serviceAccount: string;
  pod?: { name: string; uid?: string };
  audiences: readonly string[];
  expirationSeconds: number;
}

/** Issues the token, or throws the API server's refusal (NotFound, Conflict) as an ApiError. */
export async function issueBoundToken(db: Database, authority: TokenAuthority, request: BoundTokenRequest): Promise<Issued> {
  const { namespace, serviceAccount } = request;
  const account = liveObject(db, "serviceaccounts", namespace, serviceAccount);
  if (!account) throw ApiError.notFound("serviceaccounts", serviceAccount);
  let pod: { name: string; uid: string } | undefined;
  if (request.pod) {
    const uid = podUid(db, namespace, request.pod.name);
    if (!uid) throw ApiError.notFound("pods", request.pod.name);
    if (request.pod.uid !== undefined && request.pod.uid !== "" && request.pod.uid !== uid) {
      throw ApiError.conflict("pods", request.pod.name, `the UID in the bound object reference (${request.pod.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    pod = { name: request.pod.name, uid };
  }
  return authority.issue({ namespace, serviceAccount: { name: serviceAccount, uid: account.uid }, ...(pod && { pod }), audiences: request.audiences, expirationSeconds: request.expirationSeconds });
}

async function createToken(request: ApiRequest, api: ApiContext): Promise<Response> {
  const authority = api.tokens;
  if (!authority) throw new ApiError(405, "MethodNotAllowed", "ServiceAccount tokens are issued through the agent's API (minikubelet run), not through this server, which only reads its database", { kind: "serviceaccounts" });
  const { namespace, name } = request.params as { namespace: string; name: string };
  const body = await decodeBody(request, { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", internalPackage: "authentication" });
  const spec = isPlainObject(body.spec) ? body.spec : {};
  const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((audience): audience is string => typeof audience === "string") : [];
  const expirationSeconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? DEFAULT_EXPIRATION_SECONDS : Number(spec.expirationSeconds);
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw ApiError.invalid("TokenRequest", name, [{ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(spec.expirationSeconds)}: may not specify a duration less than 10 minutes`, field: "spec.expirationSeconds" }], "authentication.k8s.io");
  }
  const bound = isPlainObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
  if (bound && bound.kind !== "Pod") {
    throw ApiError.invalid("TokenRequest", name, [{ reason: "FieldValueNotSupported", message: `Unsupported value: ${JSON.stringify(bound.kind)}: supported values: "Pod"`, field: "spec.boundObjectRef.kind" }], "authentication.k8s.io");
  }
  const pod = bound && typeof bound.name === "string" ? { name: bound.name, ...(typeof bound.uid === "string" && { uid: bound.uid }) } : undefined;
  const issued = await issueBoundToken(api.store.db, authority, { namespace, serviceAccount: name, ...(pod && { pod }), audiences, expirationSeconds });
  const answer: Json = {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { name, namespace, creationTimestamp: null },
    spec: { audiences: issued.audiences, expirationSeconds, ...(bound && { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: pod!.name, ...(pod!.uid && { uid: pod!.uid }) } }) },
    status: { token: issued.token, expirationTimestamp: isoTime(issued.expiresAt) },
  };
  return new Response(JSON.stringify(answer), { status: 201, headers: { "Content-Type": "application/json" } });
}

export const tokenRequestRoutes: Route[] = [{ method: "POST", path: "/api/v1/namespaces/:namespace/serviceaccounts/:name/token", handle: createToken }];
