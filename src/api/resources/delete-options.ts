/**
 * The DeleteOptions a DELETE carries (its body, or none), as the API server reads them for the
 * resources whose deletes are served here: `dryRun` (query or body) and the uid and
 * resourceVersion preconditions. A body that is not a DeleteOptions object is its 400.
 */
import { isPlainObject } from "../../manifest/fields.ts";
import type { ApiRequest } from "../http/http.ts";
import { ApiError } from "../http/status.ts";
import { isDryRun } from "./pods/pod-write-status.ts";

export interface DeleteOptions {
  dryRun: boolean;
  uid?: string;
  resourceVersion?: string;
}

export async function deleteOptions(request: ApiRequest): Promise<DeleteOptions> {
  const text = new TextDecoder().decode(await request.body()).trim();
  let body: Record<string, unknown> = {};
  if (text !== "") {
    let decoded: unknown;
    try {
      decoded = JSON.parse(text);
    } catch (error) {
      throw ApiError.badRequest(`the request body is not a DeleteOptions object: ${(error as Error).message}`);
    }
    if (!isPlainObject(decoded)) throw ApiError.badRequest("the request body is not a DeleteOptions object");
    body = decoded;
  }
  const preconditions = isPlainObject(body.preconditions) ? body.preconditions : {};
  return {
    dryRun: isDryRun(request.query, body),
    ...(typeof preconditions.uid === "string" && { uid: preconditions.uid }),
    ...(typeof preconditions.resourceVersion === "string" && { resourceVersion: preconditions.resourceVersion }),
  };
}
