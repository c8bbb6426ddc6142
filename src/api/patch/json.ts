/** JSON values as a patch sees them, and the little it needs to handle them. */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function clone<T extends Json>(value: T): T {
  return structuredClone(value);
}

/** A patch that cannot be applied as sent: the API server answers 400 BadRequest (or 422, 413 where it says). */
export class PatchError extends Error {
  override readonly name = "PatchError";
  constructor(
    message: string,
    readonly code: 400 | 413 | 422 = 400,
  ) {
    super(message);
  }
}
