/**
 * `/openapi/v3` and `/openapi/v3/api/v1`, served as the API server's OpenAPI v3 handler serves them:
 * the index names each group/version's document by a URL carrying the document's hash, so a client may
 * cache that URL for good (`Cache-Control: public, immutable`); a stale hash is redirected (301) to
 * the current one; both answers carry an ETag and honour If-None-Match with 304. Only JSON is served
 * (kubectl asks for JSON; the protobuf form is the API server's alternative, not a requirement).
 */
import { createHash } from "node:crypto";
import type { ApiContext } from "./context.ts";
import type { ApiRequest, Route } from "./http.ts";
import { buildOpenApiDocument, CORE_GROUP_VERSION } from "./openapi-document.ts";
import { ApiError } from "./status.ts";

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

interface Served {
  body: string;
  /** The API server's document hash: the upper-case hex SHA-512 of the served bytes. */
  hash: string;
}

function served(body: string): Served {
  return { body, hash: createHash("sha512").update(body).digest("hex").toUpperCase() };
}

export function documentUrl(hash: string): string {
  return `/openapi/v3/${CORE_GROUP_VERSION}?${new URLSearchParams({ hash })}`;
}

let cache: { document: Served; index: Served } | undefined;

/** Built on first use: the binary pays for serialising and hashing the document only when asked. */
export function openApiDocuments(): { document: Served; index: Served } {
  if (!cache) {
    const document = served(JSON.stringify(buildOpenApiDocument()));
    const index = served(JSON.stringify({ paths: { [CORE_GROUP_VERSION]: { serverRelativeURL: documentUrl(document.hash) } } }));
    cache = { document, index };
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

function answer(request: ApiRequest, entity: Served, headers: Record<string, string>): Response {
  const etag = `"${entity.hash}"`;
  const all = { ...headers, "Content-Type": "application/json", Etag: etag };
  if (notModified(request, etag)) return new Response(null, { status: 304, headers: all });
  return new Response(entity.body, { status: 200, headers: all });
}

/** Whether one of the Accept header's media ranges takes JSON (no header means anything). */
function acceptsJson(accept: string | null): boolean {
  if (!accept?.trim()) return true;
  return accept.split(",").some((clause) => {
    const [type = "", subtype = ""] = (clause.split(";")[0] ?? "").trim().toLowerCase().split("/");
    return (type === "application" || type === "*") && (subtype === "json" || subtype === "*");
  });
}

function serveIndex(request: ApiRequest): Response {
  return answer(request, openApiDocuments().index, {});
}

function serveDocument(request: ApiRequest, api: ApiContext): Response {
  if (!acceptsJson(request.headers.get("accept"))) {
    throw new ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json");
  }
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

export const openApiRoutes: Route[] = [
  { method: "GET", path: "/openapi/v3", handle: serveIndex },
  { method: "GET", path: `/openapi/v3/${CORE_GROUP_VERSION}`, handle: serveDocument },
];
