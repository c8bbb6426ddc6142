/**
 * A write's body decoded as the API server decodes it for the resource of the URL: a JSON object
 * whose apiVersion and kind, when absent, are the ones the request path implies (the handler's
 * default GVK, so a client that sends a bare object, as the Python client may, is understood), and
 * whose other kind or version is the API server's 400 (transformDecodeError's wording).
 */
import { isPlainObject } from "../../manifest/fields.ts";
import type { ApiRequest } from "./http.ts";
import { decodeRequestObject } from "./request-object.ts";
import { ApiError } from "./status.ts";

/** The type a route takes: `{ apiVersion: "v1", kind: "Pod", internalPackage: "core" }`. */
export interface ExpectedKind {
  apiVersion: string;
  kind: string;
  /** The Go package of the API server's internal type, which its conversion error names (`core.Pod`). */
  internalPackage: string;
}

/**
 * The body (JSON, YAML or protobuf, by its Content-Type: request-object.ts) as a JSON object with
 * apiVersion and kind set; the API server's 400 or 415 for anything else.
 */
export async function decodeBody(request: ApiRequest, expected: ExpectedKind): Promise<Record<string, unknown>> {
  const body = decodeRequestObject(await request.body(), request.headers.get("content-type"), expected.kind);
  if (!isPlainObject(body)) throw ApiError.badRequest("the request body is not a JSON object");
  const apiVersion = body.apiVersion ?? expected.apiVersion;
  const kind = body.kind ?? expected.kind;
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    throw ApiError.badRequest(`the request body cannot be handled as a ${expected.kind}: apiVersion and kind must be strings`);
  }
  if (apiVersion !== expected.apiVersion || kind !== expected.kind) throw wrongKind(apiVersion, kind, expected);
  return { ...body, apiVersion, kind };
}

function wrongKind(apiVersion: string, kind: string, expected: ExpectedKind): ApiError {
  const version = apiVersion.split("/").at(-1)!;
  // The API server's scheme knows the kind in its own version only; any other kind it decodes and cannot convert.
  const why =
    kind === expected.kind
      ? `no kind "${kind}" is registered for version "${apiVersion}"`
      : `converting (${version}.${kind}) to (${expected.internalPackage}.${expected.kind}): unknown conversion`;
  return ApiError.badRequest(`${kind} in version "${version}" cannot be handled as a ${expected.kind}: ${why}`);
}
