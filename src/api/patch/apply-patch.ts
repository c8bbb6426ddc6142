/**
 * A PATCH body applied to the pod it names, by its Content-Type, as the API server's patch handler
 * does: strategic merge (kubectl apply, edit, set image), JSON merge (label, annotate), JSON patch,
 * and server-side apply. Server-side apply here merges the fields sent into the live object as a
 * strategic merge would; it tracks no field ownership (no managedFields, no conflicts), so a field
 * an earlier apply set and this one leaves out stays as it is.
 */
import { parse as parseYaml } from "yaml";
import { jsonDepthError } from "../http/json-depth.ts";
import { isObject, PatchError, type Json, type JsonObject } from "./json.ts";
import { jsonPatch } from "./json-patch.ts";
import { mergePatch } from "./merge-patch.ts";
import { PatchSchema } from "./patch-schema.ts";
import { strategicMergePatch } from "./strategic-merge.ts";

export const PATCH_CONTENT_TYPES = {
  strategic: "application/strategic-merge-patch+json",
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
} as const;

export type PatchKind = keyof typeof PATCH_CONTENT_TYPES;

/** The patch kind a Content-Type names (parameters ignored), or undefined for one the API server does not take (415). */
export function patchKind(contentType: string | null): PatchKind | undefined {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return (Object.keys(PATCH_CONTENT_TYPES) as PatchKind[]).find((kind) => PATCH_CONTENT_TYPES[kind] === type);
}

/** Decodes a patch body: JSON for every kind, YAML (of which JSON is a part) for an apply. */
export function decodePatch(kind: PatchKind, body: string): Json {
  const tooDeep = kind === "apply" ? undefined : jsonDepthError(body);
  if (tooDeep) throw new PatchError(`error decoding patch: ${tooDeep}`);
  try {
    return (kind === "apply" ? parseYaml(body) : JSON.parse(body)) as Json;
  } catch (error) {
    throw new PatchError(`error decoding patch: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
}

/** `current` (an object of `schema`'s kind) with the decoded `patch` applied; `current` is not changed. */
export function applyPatch(kind: PatchKind, current: JsonObject, patch: Json, schema: PatchSchema = PatchSchema.POD): JsonObject {
  if (kind === "json") {
    const result = jsonPatch(current, patch);
    if (!isObject(result)) throw new PatchError("the JSON patch left no object", 422);
    return result;
  }
  if (!isObject(patch)) throw new PatchError(`a ${PATCH_CONTENT_TYPES[kind]} body must be an object, got ${JSON.stringify(patch)}`);
  switch (kind) {
    case "merge":
      return mergePatch(current, patch) as JsonObject;
    case "strategic":
    case "apply":
      return strategicMergePatch(current, patch, schema);
  }
}
