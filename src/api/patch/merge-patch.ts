/** `application/merge-patch+json` (RFC 7386): maps merge key by key, null deletes, anything else replaces. */
import { clone, isObject, type Json } from "./json.ts";

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const result = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
