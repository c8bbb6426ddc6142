/**
 * A write's body decoded as the API server decodes it for the resource of the URL: a JSON object
 * whose apiVersion and kind, when absent, are the ones the request path implies (the handler's
 * default GVK, so a client that sends a bare object, as the Python client may, is understood), and
 * whose other kind or version is the API server's 400 (transformDecodeError's wording). Typed
 * clients (kubectl 1.33's) send some kinds as protobuf (protobuf-body.ts).
 */
import { isPlainObject } from "../manifest/fields.ts";
import type { ApiRequest } from "./http.ts";
import { acceptsProtobuf, decodeProtobufBody, PROTOBUF_CONTENT_TYPE } from "./protobuf-body.ts";
import { ApiError } from "./status.ts";

/** The type a route takes: `{ apiVersion: "v1", kind: "Pod", internalPackage: "core" }`. */
export interface ExpectedKind {
  apiVersion: string;
  kind: string;
  /** The Go package of the API server's internal type, which its conversion error names (`core.Pod`). */
  internalPackage: string;
}

/**
 * The body as a JSON object with apiVersion and kind set; a 400 for anything else. JSON always, and
 * the API server's protobuf for the kinds protobuf-body.ts describes (any other is a 415).
 */
export async function decodeBody(request: ApiRequest, expected: ExpectedKind): Promise<Record<string, unknown>> {
  const mediaType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const key = `${expected.apiVersion}/${expected.kind}`;
  let body: unknown;
  if (mediaType === PROTOBUF_CONTENT_TYPE) {
    if (!acceptsProtobuf(key)) throw new ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json");
    body = decodeProtobufBody(await request.body(), key);
  } else {
    try {
      body = JSON.parse(new TextDecoder().decode(await request.body()));
    } catch (error) {
      throw ApiError.badRequest(`the request body is not a JSON object: ${(error as Error).message}`);
    }
  }
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
