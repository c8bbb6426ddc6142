/**
 * `application/json-patch+json` (RFC 6902) through fast-json-patch. A body that is not a list of
 * operations is the API server's 400; an operation that cannot apply (a missing path, a failed
 * `test`) its 422.
 */
import { applyPatch, JsonPatchError, validate, type Operation } from "fast-json-patch";
import { clone, PatchError, type Json } from "./json.ts";

/** The API server's maxJSONPatchOperations: a few bytes an operation, a 3 MiB body holds far more. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

export function jsonPatch(document: Json, operations: Json): Json {
  if (!Array.isArray(operations)) throw new PatchError(`a JSON patch is a list of operations, got ${JSON.stringify(operations)}`);
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
    // NewRequestEntityTooLargeError, before any operation is looked at.
    throw new PatchError(`Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`, 413);
  }
  const patch = operations as unknown as Operation[];
  const invalid = validate(patch);
  if (invalid) throw new PatchError(`invalid JSON patch: operation ${invalid.index}: ${describe(invalid)}`);
  try {
    return applyPatch(clone(document), patch, true, true).newDocument as Json;
  } catch (error) {
    if (!(error instanceof JsonPatchError)) throw error;
    const at = error.index === undefined ? "" : `operation ${error.index}`;
    throw new PatchError(`the JSON patch does not apply: ${at}${at && ": "}${describe(error)}`, 422);
  }
}

function describe(error: JsonPatchError): string {
  // fast-json-patch words its messages for a developer console; the first line says it.
  const path = error.operation && "path" in error.operation ? ` (path ${error.operation.path})` : "";
  return `${error.message.split("\n")[0]}${path}`;
}
