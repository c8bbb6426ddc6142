/**
 * `/openapi/v3` and `/openapi/v3/api/v1`, served as the API server's OpenAPI v3 handler serves them:
 * the index names each group/version's document by a URL carrying the document's hash, so a client may
 * cache that URL for good (`Cache-Control: public, immutable`); a stale hash is redirected (301) to
 * the current one; every answer carries an ETag and honours If-None-Match with 304. The v3 document
 * is served as JSON only (what kubectl asks for); `/openapi/v2` as JSON or protobuf, the one form
 * kubectl 1.27 and 1.28 read before `explain`.
 */
import { createHash } from "node:crypto";
import type { ApiContext } from "../http/context.ts";
import type { ApiRequest, Route } from "../http/http.ts";
import { buildOpenApiDocument, CORE_GROUP_VERSION } from "./openapi-document.ts";
import { buildOpenApiV2Document, encodeOpenApiV2 } from "./openapi-v2.ts";
import { ApiError } from "../http/status.ts";

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

const JSON_TYPE = "application/json";
const V2_PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/** The v2 protobuf type as clients name it in Accept: kubectl sends the first. */
const V2_PROTOBUF_ACCEPTED = ["com.github.proto-openapi.spec.v2@v1.0+protobuf", "com.github.proto-openapi.spec.v2.v1.0+protobuf"];

interface Served {
  body: string | Uint8Array;
  /** The API server's document hash: the upper-case hex SHA-512 of the served bytes. */
  hash: string;
}

function served(body: string | Uint8Array): Served {
  return { body, hash: createHash("sha512").update(body).digest("hex").toUpperCase() };
}

export function documentUrl(hash: string): string {
  return `/openapi/v3/${CORE_GROUP_VERSION}?${new URLSearchParams({ hash })}`;
}

interface Documents {
  document: Served;
  index: Served;
  v2: Served;
  v2Protobuf: Served;
}

let cache: Documents | undefined;

/** Built on first use: the binary pays for serialising and hashing the documents only when asked. */
export function openApiDocuments(): Documents {
  if (!cache) {
    const document = served(JSON.stringify(buildOpenApiDocument()));
    const index = served(JSON.stringify({ paths: { [CORE_GROUP_VERSION]: { serverRelativeURL: documentUrl(document.hash) } } }));
    const v2 = buildOpenApiV2Document();
    cache = { document, index, v2: served(JSON.stringify(v2)), v2Protobuf: served(encodeOpenApiV2(v2)) };
  }
  return cache;
}

/** If-None-Match names this entity (or `*`): the client's copy is current. */
function notModified(request: ApiRequest, etag: string): boolean {
  const header = request.headers.get("if-none-match");
  if (!header) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}

function answer(request: ApiRequest, entity: Served, headers: Record<string, string>, contentType = JSON_TYPE): Response {
  const etag = `"${entity.hash}"`;
  const all = { ...headers, "Content-Type": contentType, Etag: etag };
  if (notModified(request, etag)) return new Response(null, { status: 304, headers: all });
  return new Response(entity.body, { status: 200, headers: all });
}

/** The Accept header's media ranges, most preferred first (no header means anything). */
function mediaRanges(accept: string | null): Array<{ type: string; subtype: string }> {
  const clauses = (accept?.trim() ? accept : "*/*").split(",").map((clause, order) => {
    const [range = "", ...parameters] = clause.split(";");
    const q = parameters.map((p) => p.trim().split("=")).find(([key]) => key === "q")?.[1];
    const [type = "", subtype = ""] = range.trim().toLowerCase().split("/");
    return { type, subtype, q: q === undefined ? 1 : Number(q), order };
  });
  return clauses.filter((c) => c.q > 0).sort((a, b) => b.q - a.q || a.order - b.order);
}

/** The first of `offered` (`application/<subtype>`) that the most preferred matching range takes. */
function negotiate(accept: string | null, offered: readonly string[]): string | undefined {
  for (const { type, subtype } of mediaRanges(accept)) {
    if (type !== "application" && type !== "*") continue;
    const match = offered.find((candidate) => subtype === "*" || candidate === subtype);
    if (match) return match;
  }
  return undefined;
}

function notAcceptable(type: string): ApiError {
  return new ApiError(406, "NotAcceptable", `only the following media types are accepted: ${type}`);
}

function serveIndex(request: ApiRequest): Response {
  return answer(request, openApiDocuments().index, {});
}

function serveDocument(request: ApiRequest, api: ApiContext): Response {
  if (!negotiate(request.headers.get("accept"), ["json"])) throw notAcceptable(JSON_TYPE);
  const { document } = openApiDocuments();
  const hash = request.query.get("hash");
  const headers: Record<string, string> = { Vary: "Accept" };
  if (hash) {
    if (hash !== document.hash) {
      return new Response(null, { status: 301, headers: { Location: documentUrl(document.hash), Vary: "Accept" } });
    }
    // A hashed URL names one document forever: the client may keep it without asking again.
    headers["Cache-Control"] = "public, immutable";
    headers.Expires = new Date(api.clock.now() + YEAR_MS).toUTCString();
  }
  return answer(request, document, headers);
}

function serveV2(request: ApiRequest): Response {
  const subtype = negotiate(request.headers.get("accept"), ["json", ...V2_PROTOBUF_ACCEPTED]);
  if (!subtype) throw notAcceptable(`${JSON_TYPE}, ${V2_PROTOBUF_TYPE}`);
  const { v2, v2Protobuf } = openApiDocuments();
  if (subtype === "json") return answer(request, v2, { Vary: "Accept" });
  return answer(request, v2Protobuf, { Vary: "Accept" }, V2_PROTOBUF_TYPE);
}

export const openApiRoutes: Route[] = [
  { method: "GET", path: "/openapi/v2", handle: serveV2 },
  { method: "GET", path: "/openapi/v3", handle: serveIndex },
  { method: "GET", path: `/openapi/v3/${CORE_GROUP_VERSION}`, handle: serveDocument },
];
